package ops

// The owner's command line for the authorization server: personal access tokens, clients,
// signing keys and the password hash. These commands open the file directly, so the server
// must be stopped while they run (the file's lock says so if it is not).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/oauth"
	"github.com/ownsona/ownsona/oauth/grant"
	"github.com/ownsona/ownsona/oauth/login"
	"github.com/ownsona/ownsona/oauth/policy"
	"github.com/ownsona/ownsona/oauth/token"
)

// openAdmin opens the file for an admin command, with every migration applied.
// Inside a running server (a command that came through the admin socket) it is the server's
// open file, and done does not close it.
func openAdmin(cfg Config) (db *kv.DB, done func() error, err error) {
	if cfg.live != nil {
		return cfg.live.db, func() error { return nil }, nil
	}
	db, err = kv.Open(cfg.DB, kv.Options{Migrations: migrations})
	if err != nil {
		if errors.Is(err, kv.ErrInUse) {
			return nil, nil, fmt.Errorf("open %s: %w (a running 'ownsona serve' holds the file and its admin socket did not answer; stop it first)", cfg.DB, err)
		}
		return nil, nil, fmt.Errorf("open %s: %w", cfg.DB, err)
	}
	return db, db.Close, nil
}

// parseTTL reads durations such as 90d, 12h or 30m; "never" or "0" is no expiry.
func parseTTL(s string) (time.Duration, error) {
	switch s {
	case "", "never", "0":
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 3650 {
			return 0, usageErr("--expires: %q is not a number of days between 1 and 3650", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, usageErr("--expires: %q is not a duration such as 90d, 12h or never", s)
	}
	return d, nil
}

// tokenCmd is `ownsona token create|list|revoke`.
func tokenCmd(cfg Config, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageErr("token: say create, list or revoke (see 'ownsona help')")
	}
	sub, args := args[0], args[1:]
	var name, scope, expires string
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		key, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || (key != "name" && key != "scope" && key != "expires") {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return usageErr("token %s: --%s needs a value", sub, key)
			}
			i++
			val = args[i]
		}
		switch key {
		case "name":
			name = val
		case "scope":
			scope = val
		case "expires":
			expires = val
		}
	}
	var scopes []string
	var ttl time.Duration
	switch sub {
	case "create":
		if len(rest) > 0 {
			return usageErr("token create: unexpected argument %q", rest[0])
		}
		if name == "" {
			return usageErr("token create: --name is required, e.g. --name backup-script")
		}
		var err error
		if scopes, err = policy.ParseScope(strings.ReplaceAll(scope, ",", " ")); err != nil {
			return usageErr("token create: --scope: %v", err)
		}
		if len(scopes) == 1 && scopes[0] == policy.ScopeWrite {
			scopes = []string{policy.ScopeRead, policy.ScopeWrite}
		}
		if ttl, err = parseTTL(expires); err != nil {
			return err
		}
	case "list":
		if len(rest) > 0 {
			return usageErr("token list: unexpected argument %q", rest[0])
		}
	case "revoke":
		if len(rest) != 1 {
			return usageErr("token revoke: name the token by its id or name")
		}
	default:
		return usageErr("token: unknown subcommand %q; use create, list or revoke", sub)
	}
	db, done, err := openAdmin(cfg)
	if err != nil {
		return err
	}
	defer done()
	pats, err := oauth.OpenPATs(db, cfg.Now)
	if err != nil {
		return err
	}
	switch sub {
	case "create":
		tok, p, err := pats.Create(name, scopes, ttl)
		if err != nil {
			return usageErr("token create: %v", err)
		}
		exp := "never"
		if p.ExpiresAt != nil {
			exp = p.ExpiresAt.Format(time.RFC3339)
		}
		fmt.Fprintf(stdout, "%s\n", tok)
		fmt.Fprintf(stderr, "Created %s (%s), scope %q, expires %s.\nThe token above is shown only once; send it as 'Authorization: Bearer <token>'.\n",
			p.ID, p.Name, policy.FormatScope(p.Scope), exp)
	case "revoke":
		p, err := pats.Revoke(rest[0])
		if err != nil {
			return usageErr("token revoke: %v", err)
		}
		fmt.Fprintf(stdout, "revoked %s (%s)\n", p.ID, p.Name)
	case "list":
		list, err := pats.List()
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tSCOPE\tCREATED\tEXPIRES\tLAST USED")
		for _, p := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.Name, policy.FormatScope(p.Scope),
				p.CreatedAt.Format(time.DateTime), timeOr(p.ExpiresAt, "never"), timeOr(p.LastUsedAt, "-"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return done()
}

func timeOr(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.UTC().Format(time.DateTime)
}

// clientsCmd is `ownsona clients list|revoke|delete`.
func clientsCmd(cfg Config, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usageErr("clients: say list, revoke CLIENT_ID, revoke-all or delete CLIENT_ID")
	}
	sub, rest := args[0], args[1:]
	want := map[string]int{"list": 0, "revoke": 1, "revoke-all": 0, "delete": 1}
	n, ok := want[sub]
	if !ok {
		return usageErr("clients: unknown subcommand %q; use list, revoke, revoke-all or delete", sub)
	}
	if len(rest) != n {
		return usageErr("clients %s: takes %d argument(s)", sub, n)
	}
	db, done, err := openAdmin(cfg)
	if err != nil {
		return err
	}
	defer done()
	g, err := grant.Open(db, grant.Config{Now: cfg.Now})
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		cs, err := g.Clients()
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "CLIENT ID\tNAME\tREGISTERED\tAUTHORIZED\tLAST USED\tREDIRECT URIS")
		for _, c := range cs {
			fmt.Fprintf(tw, "%s\t%q\t%s\t%s\t%s\t%s\n", c.ID, c.Name, c.CreatedAt.UTC().Format(time.DateTime),
				timeOr(c.AuthorizedAt, "never"), c.LastUsedAt.UTC().Format(time.DateTime), strings.Join(c.RedirectURIs, " "))
		}
		return tw.Flush()
	case "revoke":
		n, err := g.RevokeClient(rest[0])
		if err != nil {
			return usageErr("clients revoke: %v", err)
		}
		fmt.Fprintf(stdout, "revoked %d grant(s) of %s; it must ask the owner again\n", n, rest[0])
	case "revoke-all":
		n, err := g.RevokeAll()
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %d grant(s); every client must ask the owner again\n", n)
	case "delete":
		if err := g.DeleteClient(rest[0]); err != nil {
			return usageErr("clients delete: %v", err)
		}
		fmt.Fprintf(stdout, "deleted %s and revoked its grants\n", rest[0])
	}
	return done()
}

// keysCmd is `ownsona keys rotate|list`.
func keysCmd(cfg Config, args []string, stdout io.Writer) error {
	if len(args) != 1 || (args[0] != "rotate" && args[0] != "list") {
		return usageErr("keys: say rotate or list")
	}
	db, done, err := openAdmin(cfg)
	if err != nil {
		return err
	}
	defer done()
	keys, err := token.OpenKeys(db, cfg.Now)
	if err != nil {
		return err
	}
	if args[0] == "rotate" {
		old := keys.ActiveKID()
		if err := keys.Rotate(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "new signing key %s; %s keeps verifying tokens for %s\n", keys.ActiveKID(), old, token.RetireAfter)
		return done()
	}
	fmt.Fprintf(stdout, "active signing key: %s\n%s\n", keys.ActiveKID(), keys.JWKS())
	return done()
}

// hashPassword is `ownsona hash-password`: reads a password (twice on a terminal, without
// echo) and prints its argon2id hash for OWNSONA_LOGIN_PASSWORD.
func hashPassword(stdin io.Reader, stdout, stderr io.Writer) error {
	var pw string
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(stderr, "Password: ")
		a, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return err
		}
		fmt.Fprint(stderr, "Again: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return err
		}
		if string(a) != string(b) {
			return usageErr("hash-password: the two passwords differ")
		}
		pw = string(a)
	} else {
		line, err := bufio.NewReader(io.LimitReader(stdin, 4096)).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		pw = strings.TrimRight(line, "\r\n")
	}
	if len(pw) < 8 {
		return usageErr("hash-password: use at least 8 characters (a long passphrase is best)")
	}
	h, err := login.HashPassword(pw)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, h)
	return nil
}
