package mcp

// Tool parameters mirrored into HTTP headers (MCP 2026-07-28, basic/transports/streamable-http,
// "Custom Headers from Tool Parameters"; server/tools "x-mcp-header"): a property of a tool's
// inputSchema annotated "x-mcp-header": "Region" asks clients to send the call's value of that
// argument as Mcp-Param-Region, so that intermediaries can route on it without reading the body.
// The server must then check that the header says what the body says.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ownsona/ownsona/jsonrpc"
)

// paramHeader is one x-mcp-header annotation of a tool's inputSchema.
type paramHeader struct {
	name string   // the header is Mcp-Param-<name>
	path []string // the chain of properties keys from the schema root to the argument
	typ  string   // the property's type: "string", "integer" or "boolean"
}

// paramHeaders reads the x-mcp-header annotations of an inputSchema and checks them against the
// rules a client enforces by dropping the tool (server/tools, "x-mcp-header"): a name that is an
// HTTP token, unique whatever its case, on a property of type string, integer or boolean that
// is reachable from the root through properties alone.
func paramHeaders(schema json.RawMessage) ([]paramHeader, error) {
	if len(schema) == 0 {
		return nil, nil
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, err
	}
	var out []paramHeader
	var walk func(node map[string]any, path []string) error
	walk = func(node map[string]any, path []string) error {
		props, _ := node["properties"].(map[string]any)
		for _, key := range slices.Sorted(maps.Keys(props)) {
			prop, ok := props[key].(map[string]any)
			if !ok {
				continue
			}
			at := append(slices.Clone(path), key)
			if v, ok := prop["x-mcp-header"]; ok {
				name, ok := v.(string)
				where := "properties." + strings.Join(at, ".properties.")
				switch {
				case !ok || !isToken(name):
					return fmt.Errorf("%s: x-mcp-header must be a non-empty HTTP token (letters, digits and !#$%%&'*+-.^_`|~)", where)
				case slices.ContainsFunc(out, func(h paramHeader) bool { return strings.EqualFold(h.name, name) }):
					return fmt.Errorf("%s: x-mcp-header %q is declared twice (header names are case-insensitive)", where, name)
				}
				typ, _ := prop["type"].(string)
				if typ != "string" && typ != "integer" && typ != "boolean" {
					return fmt.Errorf("%s: x-mcp-header is allowed only on a property of type string, integer or boolean", where)
				}
				out = append(out, paramHeader{name: name, path: at, typ: typ})
			}
			if err := walk(prop, at); err != nil {
				return err
			}
		}
		return nil
	}
	obj, _ := root.(map[string]any)
	if err := walk(obj, nil); err != nil {
		return nil, err
	}
	if n := countAnnotations(root, false); n != len(out) {
		return nil, fmt.Errorf("x-mcp-header is allowed only on properties reachable from the root through properties (not under items, $defs, allOf, anyOf, oneOf, not, if, then, else or $ref targets)")
	}
	return out, nil
}

// countAnnotations counts the x-mcp-header keys anywhere in a schema. The keys of a properties
// object are property names, not keywords, so a property named "x-mcp-header" is not one.
func countAnnotations(v any, names bool) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if k == "x-mcp-header" && !names {
				n++
			}
			n += countAnnotations(sub, k == "properties" && !names)
		}
	case []any:
		for _, sub := range v {
			n += countAnnotations(sub, false)
		}
	}
	return n
}

// isToken reports whether s is an RFC 9110 token (1*tchar), as a header name must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// checkParamHeaders checks the Mcp-Param-* headers of a tools/call against its arguments: each
// annotated argument that has a value must come with its header, and the header (decoded from
// the Base64 sentinel) must say the same (integers compared as numbers); a header of an
// annotated argument must hold only the characters a header value may. An argument without a
// value needs no header. A tool the server does not have is left to tools/call to refuse.
// Under absentOK (a request served despite an older MCP-Protocol-Version, see classify) a
// missing header is no error; a header that is sent must still match.
func (s *Server) checkParamHeaders(header func(string) []string, p params, absentOK bool) *jsonrpc.Error {
	if s.Check() != nil {
		return nil
	}
	name, _, _ := str(p, "name", "name")
	hs := s.headers[name]
	if len(hs) == 0 {
		return nil
	}
	args, _ := jsonrpc.Members(p["arguments"])
	for _, h := range hs {
		key := "Mcp-Param-" + h.name
		values := header(key)
		got, ok := "", true
		if len(values) > 0 {
			got, ok = decodeHeaderValue(values[0])
		}
		switch {
		case len(values) > 1:
			return headerMismatch(key + " is repeated")
		case !ok:
			return headerMismatch(fmt.Sprintf("%s %q is neither a plain header value nor valid =?base64?…?=", key, values[0]))
		}
		raw, present := valueAt(args, h.path)
		field := "arguments." + strings.Join(h.path, ".")
		switch {
		case !present, len(values) == 0 && absentOK:
			continue
		case len(values) == 0:
			return headerMismatch(fmt.Sprintf("the %s header is required: %s has a value", key, field))
		case !sameValue(got, raw):
			return headerMismatch(fmt.Sprintf("%s %q does not match the body's %s %s", key, values[0], field, raw))
		}
	}
	return nil
}

// valueAt finds the argument at path; false when it is absent or null.
func valueAt(args params, path []string) (json.RawMessage, bool) {
	m := args
	for i, key := range path {
		raw, ok := m[key]
		if !ok || string(raw) == "null" {
			return nil, false
		}
		if i == len(path)-1 {
			return raw, true
		}
		if m, ok = jsonrpc.Members(raw); !ok {
			return nil, false
		}
	}
	return nil, false
}

// sameValue reports whether a header value says what a JSON value of the body does: the same
// string, the same number (42 and 42.0 are equal), or true or false.
func sameValue(header string, body json.RawMessage) bool {
	switch c := body[0]; {
	case c == '"':
		var v string
		return json.Unmarshal(body, &v) == nil && v == header
	case c == '-' || '0' <= c && c <= '9':
		isNumber := header != "" && (header[0] == '-' || '0' <= header[0] && header[0] <= '9') && json.Valid([]byte(header))
		return isNumber && parseDecimal(header) == parseDecimal(string(body))
	}
	return string(body) == header // true, false; an object or array never matches
}
