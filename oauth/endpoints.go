// The endpoints of the authorization server: registration (RFC 7591), authorization with PKCE
// (OAuth 2.1 §4.1, RFC 7636, RFC 8707, RFC 9207), token (OAuth 2.1 §3.2), revocation (RFC 7009)
// and the JWKS (RFC 7517).

package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ownsona/ownsona/oauth/cimd"
	"github.com/ownsona/ownsona/oauth/grant"
	"github.com/ownsona/ownsona/oauth/login"
	"github.com/ownsona/ownsona/oauth/policy"
	"github.com/ownsona/ownsona/oauth/token"
)

// maxRedirectURIs is the most redirect URIs one client may register (SECURITY.md AS-29).
const maxRedirectURIs = 10

// writeOAuthJSON writes a JSON body with the headers every token-bearing response needs.
func writeOAuthJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeOAuthError writes an RFC 6749 §5.2 error response for err (an *policy.OAuthError, or any
// other error as server_error, logged).
func (s *Server) writeOAuthError(w http.ResponseWriter, err error) {
	var oe *policy.OAuthError
	if !errors.As(err, &oe) {
		s.log.Error().Err(err).Msg("oauth endpoint failed")
		oe = policy.Errorf(policy.CodeServerError, "internal error")
	}
	if oe.Code == policy.CodeInvalidClient {
		// RFC 6749 §5.2: a 401 names the authentication scheme; public clients may use Basic with
		// an empty secret.
		w.Header().Set("WWW-Authenticate", `Basic realm="ownsona"`)
	}
	body := map[string]string{"error": oe.Code}
	if oe.Description != "" {
		body["error_description"] = oe.Description
	}
	writeOAuthJSON(w, oe.HTTPStatus(), body)
}

// allowCORS lets browser-based clients read the public endpoints' answers, never with
// credentials (SECURITY.md AS-23). It answers a preflight and reports whether it did.
func allowCORS(w http.ResponseWriter, r *http.Request, methods string) bool {
	if r.Header.Get("Origin") == "" {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Expose-Headers", "WWW-Authenticate")
	if r.Method != http.MethodOptions {
		return false
	}
	h.Set("Access-Control-Allow-Methods", methods)
	h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, MCP-Protocol-Version")
	h.Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
	return true
}

// onlyMethod answers 405 unless r uses method.
func onlyMethod(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method {
		return true
	}
	w.Header().Set("Allow", method)
	writeOAuthJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "invalid_request",
		"error_description": fmt.Sprintf("use %s", method)})
	return false
}

// readForm reads an application/x-www-form-urlencoded body of at most limit bytes and parses
// the known parameters strictly (policy.ParseForm: repeated parameters refused).
func readForm(w http.ResponseWriter, r *http.Request, limit int64, known []string) (map[string]string, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, policy.Errorf(policy.CodeInvalidRequest, "Content-Type must be application/x-www-form-urlencoded")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return nil, policy.Errorf(policy.CodeInvalidRequest, "the request body is unreadable or larger than %d bytes", limit)
	}
	return policy.ParseForm(string(body), known)
}

// ---- registration ----

type registration struct {
	ClientID                string   `json:"client_id"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientName              string   `json:"client_name,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope,omitempty"`
}

// register is RFC 7591 dynamic client registration, for public clients only.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	if allowCORS(w, r, "POST") || !onlyMethod(w, r, http.MethodPost) {
		return
	}
	if ok, wait := s.regs.allow(s.cfg.ClientIP(r)); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		writeOAuthJSON(w, http.StatusTooManyRequests, map[string]string{"error": "temporarily_unavailable",
			"error_description": "too many registrations from this address; try again later"})
		return
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/json" {
		s.writeOAuthError(w, policy.Errorf(policy.CodeInvalidClientMetadata, "Content-Type must be application/json"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRegistrationBody))
	if err != nil {
		writeOAuthJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": policy.CodeInvalidClientMetadata,
			"error_description": fmt.Sprintf("the registration is larger than %d bytes", maxRegistrationBody)})
		return
	}
	meta, err := s.parseRegistration(body)
	if err != nil {
		s.writeOAuthError(w, err)
		return
	}
	c, err := s.grants.RegisterClient(meta)
	if errors.Is(err, grant.ErrTooManyClients) {
		s.gc() // abandoned registrations may make room
		c, err = s.grants.RegisterClient(meta)
	}
	if errors.Is(err, grant.ErrTooManyClients) {
		s.log.Warn().Msg("client registration refused: too many registered clients")
		writeOAuthJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "temporarily_unavailable",
			"error_description": "this server has too many registered clients; its owner can remove some with ownsona clients"})
		return
	}
	if err != nil {
		s.writeOAuthError(w, err)
		return
	}
	s.log.Info().Str("client_id", c.ID).Str("client_name", c.Name).Str("ip", s.cfg.ClientIP(r)).Msg("client registered")
	writeOAuthJSON(w, http.StatusCreated, registration{
		ClientID: c.ID, ClientIDIssuedAt: c.CreatedAt.Unix(), ClientName: c.Name, RedirectURIs: c.RedirectURIs,
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: "none",
	})
}

// parseRegistration checks a registration request. Unknown metadata is ignored, as is a
// client_id the client proposes; anything that would let the client hold a secret, use another
// grant or redirect somewhere unsafe is refused.
func (s *Server) parseRegistration(body []byte) (grant.ClientMeta, error) {
	bad := func(format string, args ...any) (grant.ClientMeta, error) {
		return grant.ClientMeta{}, policy.Errorf(policy.CodeInvalidClientMetadata, format, args...)
	}
	if err := cimd.CheckJSON(body); err != nil {
		return bad("the body is not valid JSON: %v", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return bad("the body must be a JSON object")
	}
	var meta grant.ClientMeta
	if raw, ok := m["client_name"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &meta.Name) != nil {
			return bad("client_name must be a string")
		}
		if why := cimd.CheckClientName(meta.Name); why != "" {
			return bad("client_name %s", why)
		}
	}
	if json.Unmarshal(m["redirect_uris"], &meta.RedirectURIs) != nil || len(meta.RedirectURIs) == 0 {
		return grant.ClientMeta{}, policy.Errorf(policy.CodeInvalidRedirectURI, "redirect_uris must be a non-empty array of strings")
	}
	if len(meta.RedirectURIs) > maxRedirectURIs {
		return grant.ClientMeta{}, policy.Errorf(policy.CodeInvalidRedirectURI, "at most %d redirect_uris", maxRedirectURIs)
	}
	for _, u := range meta.RedirectURIs {
		if err := policy.ValidateRedirectURI(u, s.cfg.CustomSchemes); err != nil {
			return grant.ClientMeta{}, err
		}
		if err := s.checkRedirectHost(u); err != nil {
			return grant.ClientMeta{}, err
		}
	}
	for _, f := range []struct {
		name    string
		allowed []string
	}{
		{"grant_types", []string{"authorization_code", "refresh_token"}},
		{"response_types", []string{"code"}},
	} {
		raw, ok := m[f.name]
		if !ok || string(raw) == "null" {
			continue
		}
		var vals []string
		if json.Unmarshal(raw, &vals) != nil {
			return bad("%s must be an array of strings", f.name)
		}
		for _, v := range vals {
			if !slices.Contains(f.allowed, v) {
				return bad("%s: %q is not supported (only %s)", f.name, v, strings.Join(f.allowed, ", "))
			}
		}
	}
	// Clients asking for a secret get a public registration: the response says "none" and
	// carries no secret (RFC 7591 §3.2.1 lets the server replace requested values).
	if raw, ok := m["token_endpoint_auth_method"]; ok && string(raw) != "null" && json.Unmarshal(raw, new(string)) != nil {
		return bad("token_endpoint_auth_method must be a string")
	}
	return meta, nil
}

// checkRedirectHost applies the opt-in https redirect host allowlist (SECURITY.md AS-04).
func (s *Server) checkRedirectHost(raw string) error {
	return checkRedirectHost(raw, s.cfg.RedirectHosts)
}

func checkRedirectHost(raw string, allowlist []string) error {
	if len(allowlist) == 0 || !strings.HasPrefix(raw, "https://") {
		return nil
	}
	u, err := url.Parse(raw)
	if err == nil && slices.Contains(allowlist, u.Hostname()) {
		return nil
	}
	return policy.Errorf(policy.CodeInvalidRedirectURI, "redirect host is not in OWNSONA_REDIRECT_HOSTS")
}

// CheckRedirectURI says why registration (dynamic or by a client ID metadata document) would
// refuse the redirect URI raw under a Config's CustomSchemes (nil: the defaults) and
// RedirectHosts, or returns nil when it would accept it: what ownsona doctor checks of the
// callbacks that known clients use.
func CheckRedirectURI(raw string, customSchemes, redirectHosts []string) error {
	if customSchemes == nil {
		customSchemes = policy.DefaultCustomSchemes
	}
	if err := policy.ValidateRedirectURI(raw, customSchemes); err != nil {
		return err
	}
	return checkRedirectHost(raw, redirectHosts)
}

// ---- authorization ----

// authorize validates an authorization request completely before anything else and shows the
// login or consent page. An error found before the client and its redirect URI are known good
// (a malformed or repeated parameter, an unknown client, a redirect URI it did not register) is
// shown on our own error page and never redirected (SECURITY.md AS-02). One found after them
// (response type, PKCE, scope, resource, prompt=none) goes back to the client as an error
// response (RFC 6749 §4.1.2.1, with iss of RFC 9207), so that the client learns what to fix
// rather than leaving the person on a page it never sees — but only to a redirect URI this
// server trusts to send a browser to (trustedRedirect); any other gets the error page too, so
// that nobody can register a client to make this server an open redirector to their site
// before its owner has approved that client (SECURITY.md AS-18, RFC 9700 §4.11.2).
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		login.WriteError(w, http.StatusMethodNotAllowed, "Use GET for an authorization request.")
		return
	}
	req, status, err := s.authorizationRequest(r.Context(), r.URL.RawQuery)
	if err != nil {
		code, msg := policy.CodeOf(err), err.Error()
		var oe *policy.OAuthError
		if errors.As(err, &oe) {
			msg = oe.Description
			if msg == "" {
				msg = oe.Code
			}
		}
		if req.RedirectURI != "" && s.trustedRedirect(req.ClientID, req.RedirectURI) {
			loc, lerr := s.errorRedirect(req, code, msg)
			if lerr == nil {
				s.log.Info().Str("ip", s.cfg.ClientIP(r)).Str("client_id", req.ClientID).Str("error", code).Msg("authorization request refused; error sent to the client")
				w.Header().Set("Cache-Control", "no-store")
				w.Header().Set("Referrer-Policy", "no-referrer")
				w.Header().Set("Location", loc)
				w.WriteHeader(http.StatusFound)
				return
			}
		}
		s.log.Info().Str("ip", s.cfg.ClientIP(r)).Str("error", code).Msg("authorization request refused")
		login.WriteError(w, status, "This authorization request cannot be completed: "+msg)
		return
	}
	s.pages.Start(w, r, req)
}

// errorRedirect is the authorization error response of RFC 6749 §4.1.2.1 for req: error,
// error_description, state when the request had one, and iss (RFC 9207), appended to the
// redirect URI's own query.
func (s *Server) errorRedirect(req login.Request, code, description string) (string, error) {
	params := url.Values{"error": {code}, "error_description": {description}, "iss": {s.ep.Issuer}}
	if req.State != "" {
		params.Set("state", req.State)
	}
	return appendQuery(req.RedirectURI, params)
}

// knownClientHosts are the hosts of the hosted assistants' OAuth callbacks (claude.ai,
// claude.com, chatgpt.com): sending a browser there can only reach those clients.
var knownClientHosts = []string{"claude.ai", "claude.com", "chatgpt.com"}

// trustedRedirect reports whether this server may send a browser to redirect, a redirect URI
// that clientID registered, without its owner having seen the client: a loopback URI (a program
// on the person's own computer), an app's private-use scheme (only allowlisted schemes can be
// registered), an https host of a hosted assistant, of OWNSONA_REDIRECT_HOSTS or of the client
// metadata document allowlist, any redirect of a client identified by a metadata document (an
// allowlisted host vouches for it), and any redirect of a client the owner has approved before.
// A freshly registered client redirecting to a host of its own choosing is not trusted.
func (s *Server) trustedRedirect(clientID, redirect string) bool {
	u, err := url.Parse(redirect)
	if err != nil {
		return false
	}
	switch {
	case u.Scheme == "http":
		if policy.IsLoopbackHost(u.Hostname()) {
			return true
		}
	case u.Scheme != "https":
		return true // a private-use scheme: registration accepts only allowlisted ones
	default:
		host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
		metadataHosts := s.cfg.MetadataHosts
		if metadataHosts == nil {
			metadataHosts = cimd.DefaultAllowedHosts
		}
		for _, list := range [][]string{knownClientHosts, s.cfg.RedirectHosts, metadataHosts} {
			if slices.ContainsFunc(list, func(h string) bool { return strings.EqualFold(h, host) }) {
				return true
			}
		}
	}
	if strings.HasPrefix(clientID, "https://") {
		return true
	}
	c, err := s.grants.Client(clientID)
	return err == nil && c.AuthorizedAt != nil
}

// authorizationRequest parses and checks the query of /authorize, in order: parameters, client,
// redirect URI, then everything else. When the error is one of everything else, the returned
// request has ClientID, RedirectURI and State filled in, so that the error can go back to the
// client; else it is empty.
func (s *Server) authorizationRequest(ctx context.Context, rawQuery string) (login.Request, int, error) {
	p, err := policy.ParseForm(rawQuery, policy.AuthorizeParams)
	if err != nil {
		return login.Request{}, http.StatusBadRequest, err
	}
	clientID := p["client_id"]
	if clientID == "" {
		return login.Request{}, http.StatusBadRequest, policy.Errorf(policy.CodeInvalidRequest, "client_id is missing")
	}
	name, uris, err := s.lookupClient(ctx, clientID)
	if err != nil {
		return login.Request{}, http.StatusBadRequest, err
	}
	redirect := p["redirect_uri"]
	switch {
	case redirect == "" && len(uris) == 1:
		redirect = uris[0]
	case redirect == "":
		return login.Request{}, http.StatusBadRequest, policy.Errorf(policy.CodeInvalidRequest, "redirect_uri is missing and the client registered several")
	case !slices.ContainsFunc(uris, func(reg string) bool { return policy.MatchRedirectURI(reg, redirect) }):
		return login.Request{}, http.StatusBadRequest, policy.Errorf(policy.CodeInvalidRequest, "redirect_uri is not one the client registered")
	}
	back := login.Request{ClientID: clientID, RedirectURI: redirect, State: p["state"]}
	if err := policy.CheckResponseType(p["response_type"]); err != nil {
		return back, http.StatusBadRequest, err
	}
	if err := policy.ValidateChallenge(p["code_challenge"], p["code_challenge_method"]); err != nil {
		return back, http.StatusBadRequest, err
	}
	scope, _, err := s.parseScope(p["scope"])
	if err != nil {
		return back, http.StatusBadRequest, err
	}
	resource := s.ep.Resource
	if rs, ok := p["resource"]; ok && !s.ourResource(rs) {
		return back, http.StatusBadRequest, s.foreignResource()
	}
	if p["prompt"] == "none" {
		// Consent is asked every time (SECURITY.md AS-25), so a silent authorization is
		// impossible.
		return back, http.StatusBadRequest, policy.Errorf(policy.CodeConsentRequired, "this server always asks its owner; prompt=none cannot be honoured")
	}
	return login.Request{ClientID: clientID, ClientName: name, RedirectURI: redirect, Scope: scope,
		State: p["state"], CodeChallenge: p["code_challenge"], Resource: resource}, 0, nil
}

// ourResource reports whether the resource indicator rs (RFC 8707) names this server's MCP
// endpoint: at MCPPath or one of MCPAliases, or, in the komcp mode, the bare origin (seed 003's
// resource identifier). All of them are one resource: a request for any of them is bound to
// Endpoints.Resource, the audience of every access token, so that a token obtained at one path
// is good at every path.
func (s *Server) ourResource(rs string) bool {
	for _, p := range append([]string{MCPPath}, MCPAliases...) {
		if policy.SameResource(rs, s.ep.Issuer+p) {
			return true
		}
	}
	return s.compat.Load().KOmcp && policy.SameResource(rs, s.ep.Issuer)
}

// foreignResource is the invalid_target error for a resource this server is not.
func (s *Server) foreignResource() error {
	return policy.Errorf(policy.CodeInvalidTarget, "resource is not this server's %s (or %s)",
		s.ep.Resource, strings.Join(MCPAliases, ", "))
}

// lookupClient returns the name and redirect URIs of a registered client, or fetches the client
// ID metadata document an https client_id names and records the client.
func (s *Server) lookupClient(ctx context.Context, clientID string) (string, []string, error) {
	if strings.HasPrefix(clientID, "https://") {
		doc, err := s.docs.Fetch(ctx, clientID)
		if err != nil {
			s.log.Info().Err(err).Msg("client metadata document refused")
			return "", nil, err
		}
		c, err := s.grants.PutMetadataClient(doc.ClientID, grant.ClientMeta{Name: doc.ClientName, RedirectURIs: doc.RedirectURIs})
		if err != nil {
			return "", nil, err
		}
		s.names.Store(c.ID, c.Name)
		return c.Name, c.RedirectURIs, nil
	}
	c, err := s.grants.Client(clientID)
	if errors.Is(err, grant.ErrInvalidClient) {
		return "", nil, policy.Errorf(policy.CodeInvalidClient, "the client is not registered here (it may have been removed); the app should register again")
	}
	if err != nil {
		return "", nil, err
	}
	return c.Name, c.RedirectURIs, nil
}

// complete is login.CompleteFunc: it issues the code on Allow and builds the redirect.
func (s *Server) complete(ctx context.Context, req login.Request, allow bool) (string, error) {
	params := url.Values{}
	if allow {
		code, err := s.grants.IssueCode(grant.CodeRequest{ClientID: req.ClientID, RedirectURI: req.RedirectURI,
			Challenge: req.CodeChallenge, Resource: req.Resource, Scope: req.Scope, Subject: s.username})
		if err != nil {
			return "", err
		}
		params.Set("code", code)
		s.log.Info().Str("client_id", req.ClientID).Str("scope", policy.FormatScope(req.Scope)).Msg("client authorized")
	} else {
		params.Set("error", policy.CodeAccessDenied)
		params.Set("error_description", "the owner denied access")
		s.log.Info().Str("client_id", req.ClientID).Msg("authorization denied")
	}
	if req.State != "" {
		params.Set("state", req.State)
	}
	params.Set("iss", s.ep.Issuer)
	return appendQuery(req.RedirectURI, params)
}

// appendQuery adds params to the query of a redirect URI, keeping its own query as it is.
func appendQuery(redirect string, params url.Values) (string, error) {
	u, err := url.Parse(redirect)
	if err != nil {
		return "", fmt.Errorf("redirect URI: %w", err)
	}
	if u.RawQuery == "" {
		u.RawQuery = params.Encode()
	} else {
		u.RawQuery += "&" + params.Encode()
	}
	return u.String(), nil
}

// ---- token ----

type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// token is the token endpoint: authorization_code and refresh_token grants for public clients.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if allowCORS(w, r, "POST") || !onlyMethod(w, r, http.MethodPost) {
		return
	}
	p, err := readForm(w, r, maxTokenBody, policy.TokenParams)
	if err != nil {
		s.writeOAuthError(w, err)
		return
	}
	clientID, err := tokenClient(r, p)
	if err != nil {
		s.writeOAuthError(w, err)
		return
	}
	if err := policy.CheckGrantType(p["grant_type"]); err != nil {
		s.writeOAuthError(w, err)
		return
	}
	var resource string
	if rs, ok := p["resource"]; ok {
		if !s.ourResource(rs) {
			s.writeOAuthError(w, s.foreignResource())
			return
		}
		resource = s.ep.Resource
	}
	var t *grant.Tokens
	var offline bool // a refresh asked for offline_access
	switch p["grant_type"] {
	case "authorization_code":
		switch {
		case p["code"] == "":
			err = policy.Errorf(policy.CodeInvalidRequest, "code is missing")
		case p["code_verifier"] == "":
			err = policy.Errorf(policy.CodeInvalidRequest, "code_verifier is missing (PKCE is required)")
		default:
			t, err = s.grants.ExchangeCode(p["code"], clientID, p["redirect_uri"], p["code_verifier"], resource)
		}
	case "refresh_token":
		// A refresh may narrow the memories scopes; offline_access is accepted and changes
		// nothing (every grant has refresh tokens), so a scope of offline_access alone keeps
		// the grant's.
		var scope []string
		if sc, ok := p["scope"]; ok {
			var named bool
			if scope, named, err = s.parseScope(sc); err != nil {
				break
			}
			offline = slices.Contains(scope, policy.ScopeOfflineAccess)
			if scope = policy.ResourceScopes(scope); !named {
				scope = nil
			}
		}
		if p["refresh_token"] == "" {
			err = policy.Errorf(policy.CodeInvalidRequest, "refresh_token is missing")
			break
		}
		t, err = s.grants.Refresh(p["refresh_token"], clientID, scope, resource)
	}
	if err != nil {
		s.writeOAuthError(w, grantError(err))
		return
	}
	now := s.now()
	// The access token carries the memories scopes only: offline_access, when the client asked
	// for it, is in the grant and in the response's scope, never in what the resource checks.
	at, err := s.keys.Mint(token.Claims{Issuer: s.ep.Issuer, Subject: t.Subject, Audience: t.Resource, ClientID: t.ClientID,
		Scope: policy.ResourceScopes(t.Scope), GrantID: t.GrantID, IssuedAt: now, Expiry: now.Add(s.ttl)})
	if err != nil {
		s.writeOAuthError(w, err)
		return
	}
	granted := t.Scope
	if offline && !slices.Contains(granted, policy.ScopeOfflineAccess) {
		granted = append(slices.Clip(granted), policy.ScopeOfflineAccess)
	}
	writeOAuthJSON(w, http.StatusOK, tokenResponse{AccessToken: at, TokenType: "Bearer", ExpiresIn: int64(s.ttl / time.Second),
		RefreshToken: t.RefreshToken, Scope: policy.FormatScope(granted)})
}

// tokenClient returns the client_id of a token or revocation request: from the body, or from
// HTTP Basic credentials (a public client sends no secret, but some libraries always use Basic).
func tokenClient(r *http.Request, p map[string]string) (string, error) {
	id := p["client_id"]
	if user, _, ok := r.BasicAuth(); ok {
		user, err := url.QueryUnescape(user)
		if err != nil || (id != "" && id != user) {
			return "", policy.Errorf(policy.CodeInvalidRequest, "client_id differs between the body and the Authorization header")
		}
		id = user
	}
	if id == "" {
		return "", policy.Errorf(policy.CodeInvalidRequest, "client_id is missing")
	}
	return id, nil
}

// grantError maps the grant store's sentinels to OAuth errors.
func grantError(err error) error {
	switch {
	case errors.Is(err, grant.ErrInvalidClient):
		return policy.Errorf(policy.CodeInvalidClient, "unknown client; register again")
	case errors.Is(err, grant.ErrInvalidGrant):
		return policy.Errorf(policy.CodeInvalidGrant, "the code or refresh token is invalid, expired, already used or issued to another client")
	case errors.Is(err, grant.ErrInvalidScope):
		return policy.Errorf(policy.CodeInvalidScope, "the scope exceeds what was granted")
	case errors.Is(err, grant.ErrInvalidTarget):
		return policy.Errorf(policy.CodeInvalidTarget, "the resource differs from the grant's")
	}
	return err
}

// ---- revocation and keys ----

// revoke is RFC 7009 token revocation: a refresh token revokes its family, an access token its
// grant, a personal access token itself. Unknown tokens are not an error (§2.2).
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	if allowCORS(w, r, "POST") || !onlyMethod(w, r, http.MethodPost) {
		return
	}
	p, err := readForm(w, r, maxTokenBody, policy.RevokeParams)
	if err != nil {
		s.writeOAuthError(w, err)
		return
	}
	tok := p["token"]
	if tok == "" {
		s.writeOAuthError(w, policy.Errorf(policy.CodeInvalidRequest, "token is missing"))
		return
	}
	switch {
	case strings.HasPrefix(tok, token.PrefixRefresh):
		err = s.grants.RevokeToken(tok)
	case strings.HasPrefix(tok, token.PrefixPAT):
		err = s.pats.RevokeToken(tok)
	case strings.Count(tok, ".") == 2:
		claims, verr := s.keys.Verify(tok, token.Expect{Issuer: s.ep.Issuer, Audience: s.ep.Resource, Leeway: token.MaxLeeway})
		if verr == nil && (p["client_id"] == "" || p["client_id"] == claims.ClientID) {
			if err = s.grants.RevokeGrant(claims.GrantID); errors.Is(err, grant.ErrInvalidGrant) {
				err = nil
			}
		}
	}
	if err != nil {
		s.writeOAuthError(w, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

// jwks publishes the public signing keys.
func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	if allowCORS(w, r, "GET") {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		writeOAuthJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "invalid_request", "error_description": "use GET"})
		return
	}
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(s.keys.JWKS())
}
