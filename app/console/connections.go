package console

// The Connections page: the OAuth clients that registered, with the scopes of their grants and
// revoke, and the personal access tokens, with create (after the password again; the token is shown once), list and revoke.

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ownsona/ownsona/oauth"
	"github.com/ownsona/ownsona/oauth/policy"
)

// connectionsPage is the Connections page's data.
type connectionsPage struct {
	Clients  []clientRow
	Tokens   []tokenRow
	NewToken *newToken
	Resource string // the MCP endpoint, for the new token's instructions
}

type clientRow struct {
	ID           string
	Name         string // cleaned: no control, format or bidi characters
	Hosts        []string
	Registered   time.Time
	AuthorizedAt *time.Time
	LastUsed     time.Time
	Scope        string // what its live grants allow, space-separated; empty when none is live
	Writeable    bool
	Grants       []grantRow // newest first, revoked ones too until they are collected
}

// grantRow is one grant of a client: what the owner approved, when, and whether it still holds.
type grantRow struct {
	Scope     string
	Created   time.Time
	Refreshed time.Time // its current refresh token's issue: Created when never refreshed
	Revoked   *time.Time
	Reason    string // why it was revoked
}

type tokenRow struct {
	ID, Name  string
	Scope     string
	Created   time.Time
	Expires   *time.Time
	LastUsed  *time.Time
	Expired   bool
	Writeable bool
}

func (c *Console) getConnections(q *req) {
	auth := c.cfg.Auth()
	data := connectionsPage{NewToken: c.sessions.takeToken(q.sess), Resource: auth.Endpoints().Resource}
	clients, err := auth.Grants().Clients()
	if err != nil {
		c.log.Error().Err(err).Msg("console: list clients")
	}
	grants, err := auth.Grants().Grants("")
	if err != nil {
		c.log.Error().Err(err).Msg("console: list grants")
	}
	byClient := map[string][]grantRow{}
	live := map[string][]string{} // client id → the scopes of its live grants
	for _, g := range grants {
		byClient[g.ClientID] = append(byClient[g.ClientID], grantRow{Scope: strings.Join(g.Scope, " "), Created: g.CreatedAt,
			Refreshed: g.RefreshedAt, Revoked: g.RevokedAt, Reason: policy.Displayable(g.RevokeReason, 80)})
		if g.RevokedAt == nil {
			for _, sc := range g.Scope {
				if !slices.Contains(live[g.ClientID], sc) {
					live[g.ClientID] = append(live[g.ClientID], sc)
				}
			}
		}
	}
	for _, cl := range clients {
		scope := live[cl.ID]
		slices.Sort(scope)
		row := clientRow{ID: cl.ID, Name: policy.Displayable(cl.Name, 80), Registered: cl.CreatedAt, AuthorizedAt: cl.AuthorizedAt, LastUsed: cl.LastUsedAt,
			Scope: strings.Join(scope, " "), Writeable: slices.Contains(scope, policy.ScopeWrite), Grants: byClient[cl.ID]}
		if row.Name == "" {
			row.Name = "An unnamed app"
		}
		for _, u := range cl.RedirectURIs {
			if h := redirectHost(u); !slices.Contains(row.Hosts, h) {
				row.Hosts = append(row.Hosts, h)
			}
		}
		data.Clients = append(data.Clients, row)
	}
	// The most recently used first: the ones the owner is looking for.
	slices.SortStableFunc(data.Clients, func(a, b clientRow) int { return b.LastUsed.Compare(a.LastUsed) })
	pats, err := auth.PATs().List()
	if err != nil {
		c.log.Error().Err(err).Msg("console: list tokens")
	}
	now := c.now()
	for _, p := range pats {
		data.Tokens = append(data.Tokens, tokenRow{ID: p.ID, Name: policy.Displayable(p.Name, 80), Scope: strings.Join(p.Scope, " "),
			Created: p.CreatedAt, Expires: p.ExpiresAt, LastUsed: p.LastUsedAt, Expired: p.ExpiresAt != nil && !now.Before(*p.ExpiresAt),
			Writeable: slices.Contains(p.Scope, policy.ScopeWrite)})
	}
	c.show(q, http.StatusOK, "connections", "Connections", "connections", data)
}

// redirectHost is what a redirect URI is shown as: its host, or its scheme for an app's own.
func redirectHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return policy.Displayable(raw, 100)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return policy.Displayable(s, 40) + ": (an app on the device)"
	}
	return policy.Displayable(u.Host, 100)
}

func (c *Console) postRevokeClient(q *req) string {
	const back = Prefix + "/connections"
	id := q.form.Get("client_id")
	n, err := c.cfg.Auth().Grants().RevokeClient(id)
	if err != nil {
		c.bad(q, "Nothing revoked: no such client.")
		return back
	}
	c.ok(q, fmt.Sprintf("Access of the client revoked (%s); it must ask you again to connect.", plural(n, "grant", "grants")))
	return back
}

// tokenLifetimes are the choices of the create form.
var tokenLifetimes = map[string]time.Duration{
	"never": 0,
	"30d":   30 * 24 * time.Hour,
	"90d":   90 * 24 * time.Hour,
	"365d":  365 * 24 * time.Hour,
}

// postCreateToken creates a personal access token once the owner has typed the password again
// (the same check and throttle as signing in), and keeps it in the session to be shown once.
func (c *Console) postCreateToken(q *req) string {
	const back = Prefix + "/connections#tokens"
	if !c.recheck(q, "No token created") {
		return back
	}
	auth := c.cfg.Auth()
	scope := []string{policy.ScopeRead}
	if q.form.Get("scope") == "write" {
		scope = append(scope, policy.ScopeWrite)
	}
	ttl, ok := tokenLifetimes[q.form.Get("expires")]
	if !ok {
		c.bad(q, "No token created: choose when it expires.")
		return back
	}
	name := strings.TrimSpace(q.form.Get("name"))
	tok, pat, err := auth.PATs().Create(name, scope, ttl)
	if err != nil {
		if errors.Is(err, oauth.ErrPATExists) {
			c.bad(q, "No token created: a token with that name exists already.")
		} else {
			c.bad(q, "No token created: "+err.Error()+".")
		}
		return back
	}
	c.sessions.setToken(q.sess, &newToken{Name: pat.Name, Token: tok})
	c.log.Info().Str("pat_id", pat.ID).Msg("console: personal access token created")
	return back
}

func (c *Console) postRevokeToken(q *req) string {
	const back = Prefix + "/connections#tokens"
	id := q.form.Get("id")
	if !strings.HasPrefix(id, oauth.PATIDPrefix) {
		c.bad(q, "Nothing revoked: no such token.")
		return back
	}
	p, err := c.cfg.Auth().PATs().Revoke(id)
	if err != nil {
		c.bad(q, "Nothing revoked: no such token.")
		return back
	}
	c.ok(q, fmt.Sprintf("The token %s is revoked: it no longer works.", policy.Displayable(p.Name, 80)))
	return back
}

// recheck asks for the owner's password again before an action a stolen session must not be
// able to take (SECURITY.md CO-01: a token, a backup, a save that lowers protection), with the
// same check and throttle as signing in. It reports whether the form's password matched; when
// not, the next page says why, after refused ("No token created").
func (c *Console) recheck(q *req, refused string) bool {
	if q.form.Get("password") == "" { // asked, not a failed attempt: the throttle is not touched
		c.bad(q, refused+": type your password to confirm it is you.")
		return false
	}
	auth := c.cfg.Auth()
	var throttled *oauth.ThrottledError
	switch err := auth.CheckOwner(q.w, q.r, auth.Username(), q.form.Get("password")); {
	case errors.As(err, &throttled):
		c.bad(q, refused+": too many password attempts. Try again in "+throttled.RetryAfterSeconds()+" seconds.")
	case errors.Is(err, oauth.ErrLoginBusy):
		c.bad(q, refused+": the server is busy. Try again in a few seconds.")
	case err != nil:
		c.bad(q, refused+": that is not your password.")
	default:
		return true
	}
	return false
}
