// Package console is the owner's console: a few server-rendered pages at /console where the
// person who owns the file sees, searches, corrects and forgets their memories, reviews
// duplicates, stale facts and tags, manages the OAuth clients and personal access tokens that
// reach them, reads the activity log and downloads a backup. It is an adapter over app/memory,
// like the MCP tools: its edits go through memory.Store, whose OnChange hooks notify MCP
// subscribers, and it follows the store's rules (the same validator, the same search ranking as
// recall). app/web mounts it; web never sees the store.
//
// The simplest use, as app wires it:
//
//	c, err := console.New(console.Config{
//		Memories: store,            // *memory.Store
//		Auth:     app.Auth,         // func() *oauth.Server: the password check, clients, tokens
//		Audit:    auditLog,         // *audit.Log
//		Backup:   db.Backup,        // a consistent snapshot, from one read transaction
//		Health:   healthChecks,     // what /health reports
//	})
//	webConfig.Console = c           // served at /console and below
//
// # Pages
//
//	GET  /console/signin                  sign in (POST: the form)
//	GET  /console/memories                newest first, paged; search by meaning (Store.Search,
//	                                      recall's ranking) or exact text; filters: tag, source
//	                                      client, created from/until, forgotten and expired too
//	GET  /console/memories/{id}           one memory: read, edit, confirm, forget, restore
//	GET  /console/trash                   forgotten memories: restore, empty the trash
//	GET  /console/review                  near duplicates, memories unconfirmed for long, tags
//	GET  /console/connections             OAuth clients with their grants' scopes, and personal access tokens
//	GET  /console/approvals               calls waiting for the owner's approval, and recent decisions
//	GET  /console/activity                the audit log, filtered and paged
//	GET  /console/settings                the allowlist, approval policy and timeout, rate limits
//	GET  /console/system                  health, counts, embedder, index, the doctor's local findings,
//	                                      recent scheduled backups, backup download
//
// Every change is a POST that answers 303 to a page (SECURITY.md AS-19), except the backup
// download, which streams the file as an attachment.
//
// # Security
//
// Pages are html/template, embedded, with an embedded stylesheet, script and icon: nothing is
// loaded from another origin, and no script or style is inline. Every response carries
//
//	Content-Security-Policy: default-src 'self'; base-uri 'none'; object-src 'none'; form-action 'self'; frame-ancestors 'none'
//	X-Frame-Options: DENY
//	X-Content-Type-Options: nosniff
//	Referrer-Policy: no-referrer
//	Cache-Control: no-store (the static files, whose paths carry their digest, are cached)
//
// Memory texts, tags, client and token names and audit entries are data: the templates escape
// them, names chosen by others are also stripped of control and bidi characters, and texts
// are shown with dir="auto" inside <bdi> or their own element.
//
// Sign-in checks the owner's username and password through oauth.Server.CheckOwner: the same
// verifier, throttle (429 with Retry-After) and device cookies as the OAuth login page, so a
// guesser gains nothing by choosing this form. The sign-in form carries a CSRF token bound by
// HMAC to a short-lived cookie of its own. A right password starts a session: a cookie of 256
// random bits (__Host-ownsona_console under https, ownsona_console on plain-http loopback),
// HttpOnly, SameSite=Strict, path /, kept server-side in memory by its SHA-256 digest, with a new
// id at every sign-in, an idle timeout (Config.IdleTimeout, 30 minutes) and an absolute one
// (Config.MaxAge, 12 hours). Each session has a CSRF token of 256 bits; every POST must be
// same-origin (http.CrossOriginProtection) and carry it, or it is refused with 403 and nothing
// changes. Creating a personal access token asks for the password again; the token is shown
// once, on the page after the POST, and never kept. So do the backup download and a Settings
// save that lowers protection (more tools, less approval, a higher or no rate limit, a higher
// burst, a compatibility mode on): a session taken over cannot get the server's keys or undo
// its protections without the password (SECURITY.md CO-01). A form sent without a password is
// refused without counting as a failed attempt; a wrong one counts, as at sign-in.
//
// The backup download is a POST with the CSRF token, not a GET with a token in its URL: the
// file holds every secret of the server, and URLs end up in histories, logs and Referer headers.
//
// # Caveats
//
// Sessions live in memory: a restart signs the owner out. At most 20 sessions are kept; a new
// sign-in ends the least recently used beyond that. Times are shown in UTC. Changes made in the
// console are recorded in the audit log with transport "console" (the action, never the text).
package console
