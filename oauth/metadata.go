// RFC 8414 (OAuth 2.0 Authorization Server Metadata) and RFC 9728 (OAuth 2.0 Protected
// Resource Metadata), with the MCP 2025-11-25 authorization profile.
package oauth

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/ownsona/ownsona/oauth/policy"
)

// MCPPath is the path of the MCP endpoint: with the public origin, the resource identifier of
// the protected resource (RFC 9728 §1.2) and the audience of access tokens.
const MCPPath = "/mcp"

// MCPAliases are the other paths the MCP endpoint is served at (for seed 001's clients). Each is
// a resource of its own name for discovery — its protected-resource metadata names it, and the
// authorization server accepts it as a resource (RFC 8707) — and one resource for tokens: every
// token is minted for the canonical Resource and is good at every path.
var MCPAliases = []string{"/api/mcp", "/mcp/http"}

// DocsPath is the path of the human-readable page for developers of clients that the
// protected-resource metadata names as resource_documentation (RFC 9728 §2). The server that
// mounts the MCP endpoint serves it (app/web), as it serves MCPPath.
const DocsPath = "/docs"

// resourceMetadataPath is where RFC 9728 §3.1 puts a resource's metadata: this prefix followed
// by the resource identifier's path.
const resourceMetadataPath = "/.well-known/oauth-protected-resource"

// Endpoints are every public URL of the authorization and resource server, derived from the
// configured public origin.
type Endpoints struct {
	Issuer        string // the public origin, no path and no trailing slash
	Resource      string // Issuer + MCPPath, the audience of access tokens
	Authorization string
	Token         string
	Registration  string
	Revocation    string
	JWKS          string
	// ResourceMetadata is the RFC 9728 document for Resource (path-suffixed form).
	ResourceMetadata string
	// Documentation is Issuer + DocsPath.
	Documentation string
}

// isMCPPath reports whether path is MCPPath or one of MCPAliases.
func isMCPPath(path string) bool {
	return path == MCPPath || slices.Contains(MCPAliases, path)
}

// ResourceAt is the resource identifier of the MCP endpoint as reached at path: Issuer + path
// for MCPPath and each of MCPAliases, else Resource.
func (e Endpoints) ResourceAt(path string) string {
	if isMCPPath(path) {
		return e.Issuer + path
	}
	return e.Resource
}

// ResourceMetadataAt is the URL of the protected-resource metadata of the MCP endpoint as
// reached at path: the path-suffixed document naming that path for MCPPath and each of
// MCPAliases, else ResourceMetadata. A 401 or 403 there points at it (RFC 9728 §5.1), so that
// a client checking §3.3 finds the resource it was given.
func (e Endpoints) ResourceMetadataAt(path string) string {
	if isMCPPath(path) {
		return e.Issuer + resourceMetadataPath + path
	}
	return e.ResourceMetadata
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
		ResourceMetadata: origin + resourceMetadataPath + MCPPath,
		Documentation:    origin + DocsPath,
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
//
// Claude uses a client ID metadata document (rather than registering anew on every connection)
// only when client_id_metadata_document_supported is true and token_endpoint_auth_methods_supported
// lists "none"; both hold, and registration_endpoint stays for the clients that register.
func (e Endpoints) AuthorizationServerMetadata() []byte {
	return e.authorizationServerMetadata(policy.SupportedScopes)
}

func (e Endpoints) authorizationServerMetadata(scopes []string) []byte {
	return mustMarshal(authorizationServerMetadata{
		Issuer:                                 e.Issuer,
		AuthorizationEndpoint:                  e.Authorization,
		TokenEndpoint:                          e.Token,
		RegistrationEndpoint:                   e.Registration,
		RevocationEndpoint:                     e.Revocation,
		JWKSURI:                                e.JWKS,
		ScopesSupported:                        scopes,
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

// protectedResourceMetadata is the RFC 9728 document. It has no
// resource_signing_alg_values_supported, which seed 003 fills with its token algorithm: RFC 9728
// §2 defines it as the algorithms the resource signs its responses with, and ownsona signs none
// (the token algorithms are the authorization server's, in its JWKS).
type protectedResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
	ResourceDocumentation  string   `json:"resource_documentation"`
}

// ProtectedResourceMetadata is the RFC 9728 document for the MCP endpoint, served at
// /.well-known/oauth-protected-resource and /.well-known/oauth-protected-resource/mcp.
func (e Endpoints) ProtectedResourceMetadata() []byte {
	return e.ProtectedResourceMetadataAt(MCPPath)
}

// ProtectedResourceMetadataAt is the RFC 9728 document of the MCP endpoint as reached at path
// (MCPPath or one of MCPAliases), naming ResourceAt(path) as its resource; served at
// /.well-known/oauth-protected-resource followed by path.
func (e Endpoints) ProtectedResourceMetadataAt(path string) []byte {
	return e.protectedResourceMetadata(path, policy.DefaultScopes)
}

func (e Endpoints) protectedResourceMetadata(path string, scopes []string) []byte {
	return mustMarshal(protectedResourceMetadata{
		Resource:               e.ResourceAt(path),
		AuthorizationServers:   []string{e.Issuer},
		ScopesSupported:        scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "ownsona",
		ResourceDocumentation:  e.Documentation,
	})
}

func mustMarshal(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // the documents are plain structs of strings
	}
	return append(b, '\n')
}

// metadataDocs are the discovery documents by path.
type metadataDocs map[string][]byte

// documents returns the discovery documents with the scopes each lists: the authorization
// server's under both names, the protected resource's at the bare path (the /mcp one) and at
// each MCP path.
func (e Endpoints) documents(asScopes, prScopes []string) metadataDocs {
	as := e.authorizationServerMetadata(asScopes)
	docs := metadataDocs{
		"/.well-known/oauth-authorization-server": as,
		"/.well-known/openid-configuration":       as,
		resourceMetadataPath:                      e.protectedResourceMetadata(MCPPath, prScopes),
	}
	for _, p := range append([]string{MCPPath}, MCPAliases...) {
		docs[resourceMetadataPath+p] = e.protectedResourceMetadata(p, prScopes)
	}
	return docs
}

// MetadataPaths are the paths the discovery documents are served at.
func MetadataPaths() []string {
	paths := []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration", resourceMetadataPath}
	for _, p := range append([]string{MCPPath}, MCPAliases...) {
		paths = append(paths, resourceMetadataPath+p)
	}
	return paths
}

// MetadataHandler serves the discovery documents (MetadataPaths), as they are with no
// compatibility mode on. They are public, cheap and cacheable, and may be read cross-origin
// (never with credentials).
func (e Endpoints) MetadataHandler() http.Handler {
	docs := e.documents(policy.SupportedScopes, policy.DefaultScopes)
	return serveMetadata(func() metadataDocs { return docs })
}

// serveMetadata serves the document of docs() at the request's path.
func serveMetadata(docs func() metadataDocs) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc, ok := docs()[r.URL.Path]
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
			h.Set("Access-Control-Max-Age", "86400")
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
