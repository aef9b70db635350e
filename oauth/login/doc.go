// Package login is the part of ownsona's OAuth 2.1 authorization server
// that a person sees: the owner's password, the login, consent and sign-out
// pages, their CSRF protection, login throttling, and the session and device
// cookies. It implements SECURITY.md AS-19 to AS-22, AS-24, AS-26 to AS-28;
// the authorization server (package oauth) validates requests before calling
// it and issues codes after it.
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
//		DB:       db, // the signing key and the devices survive restarts
//		Secure:   publicURL.Scheme == "https",
//		Complete: func(ctx context.Context, req login.Request, allow bool) (string, error) {
//			// allow: issue a code for req; return req.RedirectURI with code,
//			// state and iss. deny: the same with error=access_denied.
//		},
//	})
//	for _, p := range []string{login.PathLogin, login.PathConsent, login.PathContinue, login.PathLogout} {
//		mux.Handle(p, pages)
//	}
//
// and in the /authorize handler, once client, redirect URI, PKCE, scope and
// resource are valid (an invalid client or redirect URI is
// login.WriteError, never a redirect):
//
//	pages.Start(w, r, login.Request{ClientID: …, ClientName: …, RedirectURI: …, …})
//
// # The flow
//
// Nothing is stored for a sign-in until the owner decides, so that no number
// of anonymous sign-in starts can push out the owner's. Start puts the
// request, a transaction id of 128 random bits and an expiry (Config.TxnTTL)
// into a transaction token, signed with HMAC-SHA256 under a 256-bit key kept
// in the database file (Bucket); the pages' forms carry the token and a CSRF
// token derived from its signature, and PathContinue carries the token in
// its query. Without a session cookie Start shows the login page, whose form
// POSTs to PathLogin. A right password starts a new session (a new id even
// if the browser had one: no fixation) and sets a new device cookie; a wrong
// one, for a wrong username alike, answers the same. Both answer 303 to
// PathContinue?txn=…, which shows the login page again (with "Wrong username
// or password." after a failure), or, when the browser has a session, the
// consent page; a logged-in browser's Start shows it at once. The consent
// page's token is re-signed with a tag of the session it was shown to and
// the time it was shown, keeping the expiry of Start. Consent POSTs Allow or
// Deny to PathConsent, which records the transaction id as decided (in
// memory, until the transaction would have expired: a decision is made once,
// and only a live session can record one), calls Config.Complete and answers
// 303 to the URL it returns.
//
// Allow counts only once the consent page has been shown for ConsentDelay:
// the button ignores the pointer and looks disabled until then (a CSS
// animation; the pages run no script), and an Allow POSTed sooner is
// answered 400 with the consent page again, which says why and waits its own
// second. A click aimed at something else that lands on Allow as the page
// appears decides nothing. Deny is never delayed.
//
// The consent page links to PathLogout, whose page has a form (same-origin,
// with a CSRF token bound to the session) that ends the login session and
// deletes its cookie. The device cookie stays.
//
// A POST is refused with 403 when http.CrossOriginProtection refuses it
// (Sec-Fetch-Site cross-site or same-site, or a foreign Origin), when its
// transaction token is forged, changed, expired or already decided, when its
// CSRF token is missing or another transaction's, and for consent when the
// transaction's page was shown to no or another session. A form with any
// field besides its own (a client_id, redirect_uri or scope smuggled in), a
// repeated field, another content type or more than 8 KiB is 400, and so is
// a request whose token would exceed 4 KiB (a state or client name of
// kilobytes). A GET to a POST path is 405.
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
// get 429 with Retry-After and the password is not checked. A browser that
// presents a valid device cookie (OWASP's device cookies: 256 random bits,
// set at each sign-in for DeviceTTL, HttpOnly, SameSite=Lax, Secure and
// __Host- over https, kept as SHA-256 digests in the file) is limited by its
// own MaxDeviceFailures in DeviceWindow instead, and neither by its IP nor by
// the global bucket: guesses from any number of addresses never lock the
// owner out of a browser that has signed in before. Nothing locks anyone out
// for longer than the window.
//
// Handler.CheckOwner gives another sign-in form of the server (the owner's
// console, through oauth.Server.CheckOwner) this same check: the same
// Verifier, Throttle and device cookies, so that a guesser gains nothing by
// choosing the other form. It starts no session; the caller does.
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
// Each page has at most one form (the sign-out form has a page of its own).
//
// # Caveats
//
// Sessions, decided transactions and throttling state live in memory (the
// server keeps the Throttle's state in the file across restarts): a restart
// logs the owner out, and forgets which transactions were decided, which is
// safe since a consent token names a session that no longer exists. An open
// login form survives a restart. Session ids are kept as SHA-256 digests.
// The stores are bounded (100 sessions, 1000 decided transactions, 100
// devices, 10000 throttled IPs) and grow only after a right password, except
// the IPs: past 10000 an untracked IP is limited by the global bucket only.
// While many IPs fail, the global bucket delays a browser that has not signed
// in before, the owner's too: that is the price of stopping a distributed
// guess, and it ends when the attack does. The transaction key in the file,
// like the signing keys, is a secret of every backup: with it one can forge
// a login page's transaction, though not a password or a session. Go strings
// cannot be wiped, so a plain-text password from the configuration stays in
// memory until collected; only its hash is kept.
package login
