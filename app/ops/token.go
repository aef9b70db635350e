package ops

// `ownsona token create|list|revoke`: personal access tokens for scripts.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/oauth"
	"github.com/ownsona/ownsona/oauth/policy"
)

func tokenCmd(ctx context.Context, env *Env, args []string) error {
	return dispatch(ctx, env, "token", []subcommand{
		{"create", "token create --name NAME [--scope memories:read|memories:write] [--expires 90d|never]",
			"Creates a personal access token and prints it once; the file keeps only its hash.", tokenCreate},
		{"list", "token list", "Lists the personal access tokens.", tokenList},
		{"revoke", "token revoke ID|NAME", "Revokes a personal access token at once.", tokenRevoke},
	}, args)
}

func tokenCreate(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("token create", "token create --name NAME [--scope SCOPE] [--expires 90d|never] [--db PATH]",
		"Creates a personal access token for a script and prints it on standard output, once: the file\n"+
			"keeps only its hash. Send it as 'Authorization: Bearer <token>'.")
	db := dbFlags(fs, env)
	name := fs.String("name", "", "what the token is for, e.g. backup-script (required)")
	scope := fs.String("scope", policy.ScopeRead+" "+policy.ScopeWrite, "memories:read, or memories:write (which includes read); space- or comma-separated")
	expires := fs.String("expires", "never", "lifetime such as 90d, 12h or 30m, or never")
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	if err := noOperands(fs, operands); err != nil {
		return err
	}
	if *name == "" {
		return Usagef("token create: --name is required, e.g. --name backup-script")
	}
	scopes, err := policy.ParseScope(strings.ReplaceAll(*scope, ",", " "))
	if err != nil {
		return Usagef("token create: --scope: %v", err)
	}
	if len(scopes) == 1 && scopes[0] == policy.ScopeWrite {
		scopes = []string{policy.ScopeRead, policy.ScopeWrite}
	}
	ttl, err := parseTTL(*expires)
	if err != nil {
		return Usagef("token create: %v", err)
	}
	if handled, err := env.forward(ctx, *db, adminsock.Call{Args: append([]string{"token", "create"}, args...)}, nil); handled {
		return err
	}
	kdb, _, done, err := env.openDB(*db, false)
	if err != nil {
		return err
	}
	defer done()
	pats, err := oauth.OpenPATs(kdb, env.Now)
	if err != nil {
		return err
	}
	tok, p, err := pats.Create(*name, scopes, ttl)
	if err != nil {
		return Usagef("token create: %v", err)
	}
	exp := "never"
	if p.ExpiresAt != nil {
		exp = p.ExpiresAt.Format(time.RFC3339)
	}
	fmt.Fprintf(env.Stdout, "%s\n", tok)
	fmt.Fprintf(env.Stderr, "Created %s (%s), scope %q, expires %s.\nThe token above is shown only once; send it as 'Authorization: Bearer <token>'.\n",
		p.ID, p.Name, policy.FormatScope(p.Scope), exp)
	return done()
}

func tokenList(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("token list", "token list [--db PATH]", "Lists the personal access tokens: id, name, scope, and when each was created, expires and was last used.")
	db := dbFlags(fs, env)
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	if err := noOperands(fs, operands); err != nil {
		return err
	}
	if handled, err := env.forward(ctx, *db, adminsock.Call{Args: append([]string{"token", "list"}, args...)}, nil); handled {
		return err
	}
	kdb, _, done, err := env.openDB(*db, false)
	if err != nil {
		return err
	}
	defer done()
	pats, err := oauth.OpenPATs(kdb, env.Now)
	if err != nil {
		return err
	}
	list, err := pats.List()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(env.Stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSCOPE\tCREATED\tEXPIRES\tLAST USED")
	for _, p := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.Name, policy.FormatScope(p.Scope),
			p.CreatedAt.Format(time.DateTime), timeOr(p.ExpiresAt, "never"), timeOr(p.LastUsedAt, "-"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return done()
}

func tokenRevoke(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("token revoke", "token revoke ID|NAME [--db PATH]", "Revokes a personal access token, named by its id or its name; the server refuses it at once.")
	db := dbFlags(fs, env)
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	if len(operands) != 1 {
		return Usagef("token revoke: name the token by its id or name (see 'ownsona token list')")
	}
	if handled, err := env.forward(ctx, *db, adminsock.Call{Args: append([]string{"token", "revoke"}, args...)}, nil); handled {
		return err
	}
	kdb, _, done, err := env.openDB(*db, false)
	if err != nil {
		return err
	}
	defer done()
	pats, err := oauth.OpenPATs(kdb, env.Now)
	if err != nil {
		return err
	}
	p, err := pats.Revoke(operands[0])
	if err != nil {
		return Usagef("token revoke: %v", err)
	}
	fmt.Fprintf(env.Stdout, "revoked %s (%s)\n", p.ID, p.Name)
	return done()
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
			return 0, fmt.Errorf("--expires: %q is not a number of days between 1 and 3650", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--expires: %q is not a duration such as 90d, 12h or never", s)
	}
	return d, nil
}

// timeOr formats t in UTC, or says none when it is nil.
func timeOr(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.UTC().Format(time.DateTime)
}
