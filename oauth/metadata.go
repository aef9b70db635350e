// RFC 8414 (OAuth 2.0 Authorization Server Metadata) and RFC 9728 (OAuth 2.0 Protected
// Resource Metadata), with the MCP 2025-11-25 authorization profile.
package oauth

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/ownsona/ownsona/oauth/policy"
)

// Endpoints are every public URL of the authorization and resource server, derived from the
// configured public origin.
type Endpoints struct {
	Issuer        string // the public origin, no path and no trailing slash
	Resource      string // Issuer + "/mcp", the audience of access tokens
	Authorization string
	Token         string
	Registration  string
	Revocation    string
	JWKS          string
	// ResourceMetadata is the RFC 9728 document for Resource (path-suffixed form).
	ResourceMetadata string
}

// NewEndpoints derives the endpoints from publicURL: https with a host, or http on a loopback
// host (for local use and tests); no path other than "/", no query, fragment or userinfo.
func NewEndpoints(publicURL string) (Endpoints, error) {
	u, err := url.Parse(publicURL)
	if err != nil {
		return Endpoints{}, fmt.Errorf("public URL %q: %w", publicURL, err)
	}
	switch {
	case u.Host == "" || u.Opaque != "":
		return Endpoints{}, fmt.Errorf("public URL %q has no host", publicURL)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.Contains(publicURL, "#"):
		return Endpoints{}, fmt.Errorf("public URL %q must be an origin: no userinfo, query or fragment", publicURL)
	case u.Path != "" && u.Path != "/":
		return Endpoints{}, fmt.Errorf("public URL %q must be an origin without a path (the issuer is the origin)", publicURL)
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	default:
		return Endpoints{}, fmt.Errorf("public URL %q must use https (http only on a loopback host)", publicURL)
	}
	origin := strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
	if p := u.Port(); (u.Scheme == "https" && p == "443") || (u.Scheme == "http" && p == "80") {
		origin = strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname())
		if strings.Contains(u.Hostname(), ":") {
			origin = strings.ToLower(u.Scheme) + "://[" + strings.ToLower(u.Hostname()) + "]"
		}
	}
	return Endpoints{
		Issuer:           origin,
		Resource:         origin + "/mcp",
		Authorization:    origin + "/oauth/authorize",
		Token:            origin + "/oauth/token",
		Registration:     origin + "/oauth/register",
		Revocation:       origin + "/oauth/revoke",
		JWKS:             origin + "/oauth/jwks.json",
		ResourceMetadata: origin + "/.well-known/oauth-protected-resource/mcp",
	}, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// authorizationServerMetadata is the RFC 8414 document; field order is the document's order.
type authorizationServerMetadata struct {
	Issuer                                 string   `json:"issuer"`
	AuthorizationEndpoint                  string   `json:"authorization_endpoint"`
	TokenEndpoint                          string   `json:"token_endpoint"`
	RegistrationEndpoint                   string   `json:"registration_endpoint"`
	RevocationEndpoint                     string   `json:"revocation_endpoint"`
	JWKSURI                                string   `json:"jwks_uri"`
	ScopesSupported                        []string `json:"scopes_supported"`
	ResponseTypesSupported                 []string `json:"response_types_supported"`
	ResponseModesSupported                 []string `json:"response_modes_supported"`
	GrantTypesSupported                    []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported      []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported []string `json:"revocation_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported          []string `json:"code_challenge_methods_supported"`
	AuthorizationResponseISSParameter      bool     `json:"authorization_response_iss_parameter_supported"`
	ClientIDMetadataDocumentSupported      bool     `json:"client_id_metadata_document_supported"`
}

// AuthorizationServerMetadata is the RFC 8414 document, served identically at
// /.well-known/oauth-authorization-server and /.well-known/openid-configuration.
func (e Endpoints) AuthorizationServerMetadata() []byte {
	return mustMarshal(authorizationServerMetadata{
		Issuer:                                 e.Issuer,
		AuthorizationEndpoint:                  e.Authorization,
		TokenEndpoint:                          e.Token,
		RegistrationEndpoint:                   e.Registration,
		RevocationEndpoint:                     e.Revocation,
		JWKSURI:                                e.JWKS,
		ScopesSupported:                        policy.SupportedScopes,
		ResponseTypesSupported:                 []string{"code"},
		ResponseModesSupported:                 []string{"query"},
		GrantTypesSupported:                    []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported:      []string{"none"},
		RevocationEndpointAuthMethodsSupported: []string{"none"},
		CodeChallengeMethodsSupported:          []string{policy.MethodS256},
		AuthorizationResponseISSParameter:      true,
		ClientIDMetadataDocumentSupported:      true,
	})
}

// protectedResourceMetadata is the RFC 9728 document.
type protectedResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
	SigningAlgs            []string `json:"resource_signing_alg_values_supported,omitempty"`
}

// ProtectedResourceMetadata is the RFC 9728 document for the MCP endpoint, served at
// /.well-known/oauth-protected-resource and /.well-known/oauth-protected-resource/mcp.
func (e Endpoints) ProtectedResourceMetadata() []byte {
	return mustMarshal(protectedResourceMetadata{
		Resource:               e.Resource,
		AuthorizationServers:   []string{e.Issuer},
		ScopesSupported:        policy.DefaultScopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "ownsona",
	})
}

func mustMarshal(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // the documents are plain structs of strings
	}
	return append(b, '\n')
}

// MetadataHandler serves the four discovery documents. They are public, cheap and cacheable, and
// may be read cross-origin (never with credentials).
func (e Endpoints) MetadataHandler() http.Handler {
	as, pr := e.AuthorizationServerMetadata(), e.ProtectedResourceMetadata()
	docs := map[string][]byte{
		"/.well-known/oauth-authorization-server":   as,
		"/.well-known/openid-configuration":         as,
		"/.well-known/oauth-protected-resource":     pr,
		"/.well-known/oauth-protected-resource/mcp": pr,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodOptions:
			h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "MCP-Protocol-Version")
			w.WriteHeader(http.StatusNoContent)
			return
		case http.MethodGet, http.MethodHead:
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "public, max-age=3600")
		w.Write(doc)
	})
}
