// Package login is the part of ownsona's OAuth 2.1 authorization server
// that a person sees: the owner's password, the login and consent pages,
// their CSRF protection, login throttling and the session cookie. It
// implements SECURITY.md AS-19 to AS-22, AS-24, AS-26 to AS-28; the
// authorization server (package oauth) validates requests before calling it
// and issues codes after it.
//
// The simplest use:
//
//	v, warn, err := login.NewVerifier(cfg.LoginUsername, cfg.LoginPassword)
//	if err != nil {
//		return err
//	}
//	if warn != "" {
//		log.Warn().Msg(warn) // plain-text password in the configuration
//	}
//	pages, err := login.New(login.Config{
//		Verifier: v,
//		Secure:   publicURL.Scheme == "https",
//		Complete: func(ctx context.Context, req login.Request, allow bool) (string, error) {
//			// allow: issue a code for req; return req.RedirectURI with code,
//			// state and iss. deny: the same with error=access_denied.
//		},
//	})
//	mux.Handle(login.PathLogin, pages)
//	mux.Handle(login.PathConsent, pages)
//	mux.Handle(login.PathContinue, pages)
//
// and in the /authorize handler, once client, redirect URI, PKCE, scope and
// resource are valid (an invalid client or redirect URI is
// login.WriteError, never a redirect):
//
//	pages.Start(w, r, login.Request{ClientID: …, ClientName: …, RedirectURI: …, …})
//
// # The flow
//
// Start keeps the request server-side under a transaction id of 256 random
// bits, with its own CSRF token of 256 random bits, for Config.TxnTTL. The
// pages' forms carry only these two. Without a session cookie Start shows
// the login page, whose form POSTs to PathLogin. A right password starts a
// new session (a new id even if the browser had one: no fixation) and ties
// the transaction to it, with a new CSRF token; a wrong one, for a wrong
// username alike, shows the login page again with the same message. Both
// answer 303 to PathContinue?txn=…, which shows the login page, or the
// consent page when the browser's session owns the transaction (a logged-in
// browser's Start shows it at once). Consent POSTs Allow or Deny to
// PathConsent, which takes the transaction out of the store (a decision is
// made once), calls Config.Complete and answers 303 to the URL it returns.
//
// A POST is refused with 403 when http.CrossOriginProtection refuses it
// (Sec-Fetch-Site cross-site or same-site, or a foreign Origin), when its
// transaction is unknown or expired, when its CSRF token is missing or
// another transaction's, and for consent when the transaction belongs to no
// or another session. A form with any field besides its own (a client_id,
// redirect_uri or scope smuggled in), a repeated field, another content
// type or more than 8 KiB is 400. A GET to a POST path is 405.
//
// # Passwords
//
// Verifier accepts an argon2id PHC string (what HashPassword and `ownsona
// hash-password` print), a bcrypt hash, or plain text, which it hashes at
// once and keeps only as a hash. Check always runs the whole key derivation
// and compares usernames as SHA-256 digests in constant time, so a wrong
// username and a wrong password cost the same and answer the same. At most
// DefaultConcurrency checks run at once (19 MiB each); a login that cannot
// get a slot within 2 s gets 503 with Retry-After.
//
// # Throttling
//
// Throttle limits attempts per IP with growing delays and a cap of
// MaxFailures in Window, and globally with a leaky bucket; refused attempts
// get 429 with Retry-After and the password is not checked. Nothing locks
// the owner out for longer than the window.
//
// # Pages
//
// Pages are html/template, embedded, with inline styles and nothing loaded
// from anywhere. Every response sets
//
//	Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'
//	X-Frame-Options: DENY
//	Cache-Control: no-store
//	Referrer-Policy: no-referrer
//	X-Content-Type-Options: nosniff
//
// except that the consent page's form-action also names the origin of the
// request's redirect URI (or its scheme alone when CSP cannot name the
// origin: an IPv6 literal, a custom scheme): Chrome and Safari apply
// form-action to the 303 that follows the form, and would otherwise stop
// the browser on its way back to the client. The consent page shows the
// client's name escaped and stripped of control, bidi and zero-width
// characters (marked U+FFFD), says that the name is unverified, shows the
// redirect host prominently with a warning for a loopback host or a custom
// scheme, the host of a client ID metadata document URL, and the scopes.
//
// # Caveats
//
// Transactions, sessions and throttling state live in memory: a restart
// logs the owner out, forgets pending logins (the client starts again) and
// forgets failures. Session ids are kept as SHA-256 digests. The stores are
// bounded (1000 pending transactions, 100 sessions, 10000 throttled IPs);
// past those the soonest to expire is dropped, and an untracked IP is
// limited by the global bucket only. While many IPs fail, the global bucket
// also delays the owner: that is the price of stopping a distributed guess,
// and it ends when the attack does. Go strings cannot be wiped, so a
// plain-text password from the configuration stays in memory until
// collected; only its hash is kept.
package login
