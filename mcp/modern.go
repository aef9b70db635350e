package mcp

// The modern era (MCP 2026-07-28, basic/versioning "Backward Compatibility"): a request whose
// _meta carries io.modelcontextprotocol/protocolVersion is served statelessly under that
// revision, beside the initialize-based revisions on the same endpoint and connection. This file
// holds what only that era has: per-request metadata, result decoration (resultType, cache
// hints, serverInfo), server/discover, and the methods it removed.

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/ownsona/ownsona/jsonrpc"
)

// ModernProtocolVersion is the stateless revision: no initialize, every request declares its
// version, capabilities and client in _meta.
const ModernProtocolVersion = "2026-07-28"

// ModernProtocolVersions are the stateless revisions served, newest first.
var ModernProtocolVersions = []string{ModernProtocolVersion}

// AllProtocolVersions are every revision this server speaks, newest first: server/discover's
// supportedVersions and the list an UnsupportedProtocolVersion error names.
func AllProtocolVersions() []string {
	return slices.Concat(ModernProtocolVersions, SupportedProtocolVersions)
}

// The _meta keys of 2026-07-28 requests, results and notifications.
const (
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo      = "io.modelcontextprotocol/clientInfo"
	metaClientCaps      = "io.modelcontextprotocol/clientCapabilities"
	metaLogLevel        = "io.modelcontextprotocol/logLevel"
	metaServerInfo      = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID  = "io.modelcontextprotocol/subscriptionId"
)

// metaKeys are the _meta members a request may carry (others are ignored, lookalikes refused).
var metaKeys = []string{"progressToken", metaProtocolVersion, metaClientInfo, metaClientCaps, metaLogLevel}

// Cache hints of 2026-07-28 results (server/utilities/caching). Every list depends on the
// caller's token (tools/list shows what its scopes allow), so all are private.
const (
	ttlDiscover  = 300_000 // capabilities and versions change only with a new binary
	ttlLists     = 60_000  // the tool list changes when the allowlist does
	ttlTemplates = 300_000
	ttlRead      = 0 // memories change with every write
)

// cacheTTL is the ttlMs of a method's results in the modern era; false for methods whose
// results are not cacheable.
func cacheTTL(method string) (int, bool) {
	switch method {
	case "server/discover":
		return ttlDiscover, true
	case "tools/list", "prompts/list", "resources/list":
		return ttlLists, true
	case "resources/templates/list":
		return ttlTemplates, true
	case "resources/read":
		return ttlRead, true
	}
	return 0, false
}

// modernMethod reports whether a method exists in 2026-07-28. initialize, ping,
// logging/setLevel and resources/(un)subscribe were removed by it.
func modernMethod(method string) bool {
	switch method {
	case "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe":
		return false
	}
	return true
}

// reqMeta is what a request's _meta says.
type reqMeta struct {
	modern   bool   // it carries io.modelcontextprotocol/protocolVersion
	version  string // that version
	client   *Implementation
	caps     params // the client's capabilities; nil when not declared
	logLevel string // "" when the request set none
}

// readMeta reads a request's _meta. A modern request must carry its protocol version (a
// string) and its client capabilities (an object); clientInfo and logLevel are optional.
func readMeta(p params) (reqMeta, json.RawMessage, error) {
	var rm reqMeta
	raw, ok := p["_meta"]
	if !ok || string(raw) == "null" {
		return rm, nil, nil
	}
	m, ok := jsonrpc.Members(raw)
	if !ok {
		return rm, nil, jsonrpc.InvalidParams("_meta", "must be an object")
	}
	if err := checkKeys(m, "_meta", metaKeys...); err != nil {
		return rm, nil, err
	}
	tok, hasTok := m["progressToken"]
	if hasTok && string(tok) != "null" {
		if tok[0] != '"' && tok[0] != '-' && (tok[0] < '0' || tok[0] > '9') {
			return rm, nil, jsonrpc.InvalidParams("_meta.progressToken", "must be a string or a number")
		}
	} else {
		tok = nil
	}
	if _, ok := m[metaProtocolVersion]; !ok {
		return rm, tok, nil
	}
	rm.modern = true
	var err error
	if rm.version, err = requiredStr(m, "_meta."+metaProtocolVersion, metaProtocolVersion); err != nil {
		return rm, tok, err
	}
	caps, ok, err := object(m, "_meta."+metaClientCaps, metaClientCaps)
	switch {
	case err != nil:
		return rm, tok, err
	case !ok:
		return rm, tok, jsonrpc.InvalidParams("_meta."+metaClientCaps, "is required in protocol version "+rm.version)
	}
	rm.caps = caps
	if ci, ok, err := object(m, "_meta."+metaClientInfo, metaClientInfo); err != nil {
		return rm, tok, err
	} else if ok {
		if rm.client, err = readImplementation(ci, "_meta."+metaClientInfo); err != nil {
			return rm, tok, err
		}
	}
	if lvl, ok, err := str(m, "_meta."+metaLogLevel, metaLogLevel); err != nil {
		return rm, tok, err
	} else if ok {
		if !slices.Contains(logLevels, lvl) {
			return rm, tok, jsonrpc.InvalidParams("_meta."+metaLogLevel, "must be one of debug, info, notice, warning, error, critical, alert, emergency")
		}
		rm.logLevel = lvl
	}
	return rm, tok, nil
}

// readImplementation reads a clientInfo object.
func readImplementation(ci params, field string) (*Implementation, error) {
	if err := checkKeys(ci, field, "name", "title", "version"); err != nil {
		return nil, err
	}
	impl := &Implementation{}
	for _, f := range []struct {
		key string
		dst *string
	}{{"name", &impl.Name}, {"title", &impl.Title}, {"version", &impl.Version}} {
		var err error
		if *f.dst, _, err = str(ci, field+"."+f.key, f.key); err != nil {
			return nil, err
		}
	}
	return impl, nil
}

// declares reports whether the client's capabilities hold capability (e.g. "elicitation").
func (rm *reqMeta) declares(capability string) bool {
	v, ok := rm.caps[capability]
	return ok && string(v) != "null" && string(v) != "false"
}

// decorate writes into b (emptied first) what every 2026-07-28 result carries added to a
// marshalled result object: resultType (unless the result has its own, as input_required
// ones do), the server's identity in _meta and, for cacheable methods, ttlMs and cacheScope.
// A result that is not an object is written as it is.
func (s *Server) decorate(b *bytes.Buffer, method string, result []byte) {
	b.Reset()
	body := bytes.TrimSpace(result)
	if len(body) < 2 || body[0] != '{' {
		b.Write(result)
		return
	}
	inner := bytes.TrimSpace(body[1 : len(body)-1])
	b.WriteByte('{')
	if !startsWithKey(inner, "resultType") {
		b.WriteString(`"resultType":"complete",`)
		if ttl, ok := cacheTTL(method); ok {
			b.WriteString(`"ttlMs":` + strconv.Itoa(ttl) + `,"cacheScope":"private",`)
		}
	}
	info, _ := jsonrpc.Marshal(s.Info)
	if startsWithKey(inner, "_meta") && bytes.HasPrefix(inner, []byte(`"_meta":{`)) {
		// A result whose first member is its own _meta (a subscription's end): the server's
		// identity joins it.
		at := len(`"_meta":{`)
		b.Write(inner[:at])
		b.WriteString(`"` + metaServerInfo + `":`)
		b.Write(info)
		if inner[at] != '}' {
			b.WriteByte(',')
		}
		b.Write(inner[at:])
		b.WriteByte('}')
		return
	}
	b.WriteString(`"_meta":{"` + metaServerInfo + `":`)
	b.Write(info)
	b.WriteByte('}')
	if len(inner) > 0 {
		b.WriteByte(',')
		b.Write(inner)
	}
	b.WriteByte('}')
}

// startsWithKey reports whether an object's members begin with key. Only a first member is
// recognized, so that a value containing the same text is never mistaken for the member.
func startsWithKey(inner []byte, key string) bool {
	return bytes.HasPrefix(inner, []byte(`"`+key+`":`))
}

// ---- server/discover ----

type discoverResult struct {
	SupportedVersions []string     `json:"supportedVersions"`
	Capabilities      capabilities `json:"capabilities"`
	Instructions      string       `json:"instructions,omitempty"`
}

// discover answers server/discover, in either era: every revision served, the capabilities,
// and the instructions. The result's decoration (serverInfo, cache hints) is the modern one
// whatever the request's era, as the method exists only in 2026-07-28.
func (s *Server) discover() discoverResult {
	return discoverResult{AllProtocolVersions(), s.capabilities(true), s.Instructions}
}

// declaresVersion reports whether a request's params._meta names a protocol version: the mark
// of a 2026-07-28 (modern) request.
func declaresVersion(r *jsonrpc.Message) bool {
	p, ok := jsonrpc.Members(r.Params)
	if !ok {
		return false
	}
	m, ok := jsonrpc.Members(p["_meta"])
	if !ok {
		return false
	}
	_, ok = m[metaProtocolVersion]
	return ok
}
