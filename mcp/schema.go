package mcp

// Argument validation against a tool's inputSchema: the subset of JSON Schema (2020-12) that
// tool arguments need. Keywords outside the subset are refused when the schema is compiled, so
// that nothing a schema promises goes silently unchecked.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ownsona/ownsona/jsonrpc"
)

// Keywords a schema may carry without effect on validation (JSON Schema annotations).
var annotationKeywords = []string{
	"$schema", "$id", "$comment", "$defs", "definitions", "title", "description", "default",
	"examples", "deprecated", "readOnly", "writeOnly", "contentMediaType", "contentEncoding",
	"x-mcp-header", // for the HTTP transport (see paramHeaders), not for validation
}

// Keywords that validate.
var validationKeywords = []string{
	"type", "properties", "required", "additionalProperties", "enum", "const", "minimum",
	"maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems",
	"maxItems", "items", "format", "$ref", "anyOf",
}

var schemaTypes = []string{"object", "array", "string", "integer", "number", "boolean", "null"}

// schemaNode is one compiled (sub)schema.
type schemaNode struct {
	never      bool // the boolean schema false
	types      []string
	properties map[string]*schemaNode
	propNames  []string // the keys of properties, sorted
	required   []string
	closed     bool // additionalProperties: false
	enum       []any
	constant   *any
	minimum    *bound
	maximum    *bound
	exclMin    *bound
	exclMax    *bound
	minLength  int // -1 when absent, as are the three below
	maxLength  int
	minItems   int
	maxItems   int
	items      *schemaNode
	format     string
	ref        *schemaNode   // $ref: the value must also match the schema it points to
	anyOf      []*schemaNode // anyOf: the value must also match one of these
}

// bound is a numeric limit, kept as written for messages and as a decimal for comparing.
type bound struct {
	text string
	dec  decimal
}

// Schema is a compiled JSON Schema, for validating values outside tools/call (a batch tool's
// items, one by one). Safe for concurrent use.
type Schema struct{ n *schemaNode }

// CompileSchema compiles a JSON Schema using only the supported keywords: type (a name or a
// list of object, array, string, integer, number, boolean, null; an integer is a number
// written without a fraction or exponent), properties, required,
// additionalProperties (true or false), enum, const, minimum, maximum, exclusiveMinimum,
// exclusiveMaximum, minLength, maxLength (in characters), minItems, maxItems, items (one
// schema), format ("date-time" is checked as RFC 3339; other formats are annotations), anyOf
// (a non-empty list of schemas, one of which the value must match: the portable spelling of a
// list of types, {"anyOf":[{"type":"array"},{"type":"string"}]}) and $ref (a JSON Pointer
// within the same schema, such as "#/$defs/address"; recursion must pass through properties
// or items), plus annotations such as $schema, $defs and description. Any other keyword is an
// error, as is a $ref to another document. An empty raw is {"type":"object"}.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	n, err := compileSchema(raw)
	if err != nil {
		return nil, err
	}
	return &Schema{n}, nil
}

// Validate checks one JSON value against the schema; raw must be strict JSON (see checkJSON:
// no duplicate keys, valid UTF-8). The first violation is returned as an
// *ArgError whose Field is a path under prefix (e.g. "items[3].text" for prefix "items[3]");
// a violation of the value itself names prefix, or "arguments" when prefix is empty.
func (s *Schema) Validate(prefix string, raw json.RawMessage) error {
	if jsonrpc.CheckJSON(raw) != nil {
		return &ArgError{Field: rootField(prefix), Reason: "is not valid JSON"}
	}
	return s.n.validateRoot(prefix, raw)
}

// compileSchema compiles a tool's schema.
func compileSchema(raw json.RawMessage) (*schemaNode, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	if err := jsonrpc.CheckJSON(raw); err != nil {
		return nil, fmt.Errorf("schema is not strict JSON: %w", err)
	}
	v, err := decodeValue(raw)
	if err != nil {
		return nil, err
	}
	c := &schemaCompiler{root: v, refs: map[string]*schemaNode{}, active: map[string]bool{}}
	return c.node("", v)
}

// schemaCompiler compiles one schema document, resolving each $ref target once.
type schemaCompiler struct {
	root any
	refs map[string]*schemaNode // the compiled targets of $ref, by reference
	// active are the $ref targets being compiled for the current instance location: meeting
	// one again before descending into a property or an item is a loop that validation could
	// never leave.
	active map[string]bool
}

// ref compiles the target of a $ref. A target met again below a property or an item gets the
// node being built, so that recursive schemas (a tree of nodes) compile to a cycle.
func (c *schemaCompiler) ref(at, ref string) (*schemaNode, error) {
	if at == "" {
		at = "schema"
	}
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("%s: $ref %q: only references within the schema (#/...) are supported", at, ref)
	}
	if c.active[ref] {
		return nil, fmt.Errorf("%s: $ref %q refers back to itself without a property or item between", at, ref)
	}
	if n := c.refs[ref]; n != nil {
		return n, nil
	}
	v, ok := jsonPointer(c.root, ref[1:])
	if !ok {
		return nil, fmt.Errorf("%s: $ref %q points to nothing in the schema", at, ref)
	}
	n := &schemaNode{}
	c.refs[ref] = n
	c.active[ref] = true
	compiled, err := c.node(ref, v)
	delete(c.active, ref)
	if err != nil {
		delete(c.refs, ref)
		return nil, err
	}
	*n = *compiled
	return n, nil
}

// below compiles a subschema at a deeper instance location (a property's or the items').
func (c *schemaCompiler) below(at string, v any) (*schemaNode, error) {
	saved := c.active
	c.active = map[string]bool{}
	defer func() { c.active = saved }()
	return c.node(at, v)
}

// jsonPointer resolves an RFC 6901 pointer ("" or "/$defs/a~1b") in a decoded JSON value.
func jsonPointer(v any, ptr string) (any, bool) {
	if ptr == "" {
		return v, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[tok]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) || strconv.Itoa(i) != tok {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// decodeValue decodes JSON with numbers kept as json.Number.
func decodeValue(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("data after the JSON value")
	}
	return v, nil
}

func (c *schemaCompiler) node(at string, v any) (*schemaNode, error) {
	fail := func(format string, args ...any) error {
		where := at
		if where == "" {
			where = "schema"
		}
		return fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...))
	}
	switch b := v.(type) {
	case bool:
		return &schemaNode{never: !b, minLength: -1, maxLength: -1, minItems: -1, maxItems: -1}, nil
	case map[string]any:
	default:
		return nil, fail("a schema must be an object or a boolean")
	}
	m := v.(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(validationKeywords, k) && !slices.Contains(annotationKeywords, k) {
			return nil, fail("unsupported keyword %q", k)
		}
	}
	n := &schemaNode{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1}
	switch t := m["type"].(type) {
	case nil:
	case string:
		n.types = []string{t}
	case []any:
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, fail("type must be a name or a list of names")
			}
			n.types = append(n.types, s)
		}
	default:
		return nil, fail("type must be a name or a list of names")
	}
	for _, t := range n.types {
		if !slices.Contains(schemaTypes, t) {
			return nil, fail("unknown type %q", t)
		}
	}
	if p, ok := m["properties"]; ok {
		props, ok := p.(map[string]any)
		if !ok {
			return nil, fail("properties must be an object")
		}
		n.properties = map[string]*schemaNode{}
		for _, k := range slices.Sorted(maps.Keys(props)) {
			sub, err := c.below(joinPath(at+".properties", k), props[k])
			if err != nil {
				return nil, err
			}
			n.properties[k] = sub
			n.propNames = append(n.propNames, k)
		}
	}
	if r, ok := m["required"]; ok {
		list, ok := r.([]any)
		if !ok {
			return nil, fail("required must be a list of names")
		}
		for _, x := range list {
			s, ok := x.(string)
			if !ok {
				return nil, fail("required must be a list of names")
			}
			n.required = append(n.required, s)
		}
	}
	switch ap := m["additionalProperties"].(type) {
	case nil:
		if _, ok := m["additionalProperties"]; ok {
			return nil, fail("additionalProperties must be true or false")
		}
	case bool:
		n.closed = !ap
	default:
		return nil, fail("additionalProperties must be true or false (schemas are not supported)")
	}
	if e, ok := m["enum"]; ok {
		list, ok := e.([]any)
		if !ok || len(list) == 0 {
			return nil, fail("enum must be a non-empty list")
		}
		n.enum = list
	}
	if c, ok := m["const"]; ok {
		n.constant = &c
	}
	for _, b := range []struct {
		key string
		dst **bound
	}{{"minimum", &n.minimum}, {"maximum", &n.maximum}, {"exclusiveMinimum", &n.exclMin}, {"exclusiveMaximum", &n.exclMax}} {
		x, ok := m[b.key]
		if !ok {
			continue
		}
		num, ok := x.(json.Number)
		if !ok {
			return nil, fail("%s must be a number", b.key)
		}
		*b.dst = &bound{text: num.String(), dec: parseDecimal(num.String())}
	}
	for _, l := range []struct {
		key string
		dst *int
	}{{"minLength", &n.minLength}, {"maxLength", &n.maxLength}, {"minItems", &n.minItems}, {"maxItems", &n.maxItems}} {
		x, ok := m[l.key]
		if !ok {
			continue
		}
		num, _ := x.(json.Number)
		i, err := strconv.Atoi(num.String())
		if err != nil || i < 0 {
			return nil, fail("%s must be a non-negative integer", l.key)
		}
		*l.dst = i
	}
	if it, ok := m["items"]; ok {
		sub, err := c.below(at+".items", it)
		if err != nil {
			return nil, err
		}
		n.items = sub
	}
	if f, ok := m["format"]; ok {
		s, ok := f.(string)
		if !ok {
			return nil, fail("format must be a string")
		}
		n.format = s
	}
	if a, ok := m["anyOf"]; ok {
		list, ok := a.([]any)
		if !ok || len(list) == 0 {
			return nil, fail("anyOf must be a non-empty list of schemas")
		}
		for i, x := range list {
			// The branches describe the same value: no property or item lies between, so a
			// $ref loop through them is still a loop.
			sub, err := c.node(joinPath(at, fmt.Sprintf("anyOf[%d]", i)), x)
			if err != nil {
				return nil, err
			}
			n.anyOf = append(n.anyOf, sub)
		}
	}
	if r, ok := m["$ref"]; ok {
		s, ok := r.(string)
		if !ok {
			return nil, fail("$ref must be a string")
		}
		target, err := c.ref(at, s)
		if err != nil {
			return nil, err
		}
		n.ref = target
	}
	return n, nil
}

func rootField(prefix string) string {
	if prefix == "" {
		return "arguments"
	}
	return prefix
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// typeOf names the JSON type of a checked raw value. A number is an "integer" when it is
// written without a fraction or an exponent: what Go decodes into an int. (JSON Schema would
// also count 2.0 and 1e2, which a handler's json.Unmarshal into an int then refuses.)
func typeOf(raw []byte) string {
	switch raw[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	case '"':
		return "string"
	case '[':
		return "array"
	case '{':
		return "object"
	}
	if bytes.ContainsAny(raw, ".eE") {
		return "number"
	}
	return "integer"
}

// validateRoot validates raw (checked JSON, no surrounding space) and names the field at
// fault under prefix; a violation of the value itself names prefix, or "arguments".
func (n *schemaNode) validateRoot(prefix string, raw []byte) error {
	err := n.validate(true, raw)
	if err == nil {
		return nil
	}
	switch {
	case err.Field == "":
		err.Field = rootField(prefix)
	case prefix != "":
		err.Field = childPath(prefix, err.Field)
	}
	return err
}

// childPath joins a path and a path below it: "items" and "[3].text" or "text".
func childPath(path, below string) string {
	switch {
	case below == "":
		return path
	case strings.HasPrefix(below, "["):
		return path + below
	}
	return path + "." + below
}

// validate checks the raw value against the schema. The error's Field is relative to the
// value ("" for the value itself, "items[3].text" below it), so that paths are built only for
// the one violation reported; root marks the value validation started from.
func (n *schemaNode) validate(root bool, raw []byte) *ArgError {
	bad := func(format string, args ...any) *ArgError {
		return &ArgError{Reason: fmt.Sprintf(format, args...)}
	}
	if n.never {
		return bad("is not allowed")
	}
	if n.ref != nil {
		if err := n.ref.validate(root, raw); err != nil {
			return err
		}
	}
	t := typeOf(raw)
	if len(n.anyOf) > 0 {
		if err := n.validateAnyOf(root, t, raw); err != nil {
			return err
		}
	}
	if !n.admits(t) {
		return bad("must be %s", describeTypes(n.types))
	}
	if n.constant != nil || n.enum != nil {
		v, _ := decodeValue(raw)
		if n.constant != nil && !jsonEqual(*n.constant, v) {
			return bad("must be %s", describeValues([]any{*n.constant}))
		}
		if n.enum != nil && !slices.ContainsFunc(n.enum, func(e any) bool { return jsonEqual(e, v) }) {
			return bad("must be one of %s", describeValues(n.enum))
		}
	}
	switch t {
	case "integer", "number":
		if n.minimum == nil && n.maximum == nil && n.exclMin == nil && n.exclMax == nil {
			return nil
		}
		d := parseDecimal(string(raw))
		switch {
		case n.minimum != nil && d.cmp(n.minimum.dec) < 0:
			return bad("must be at least %s", n.minimum.text)
		case n.exclMin != nil && d.cmp(n.exclMin.dec) <= 0:
			return bad("must be greater than %s", n.exclMin.text)
		case n.maximum != nil && d.cmp(n.maximum.dec) > 0:
			return bad("must be at most %s", n.maximum.text)
		case n.exclMax != nil && d.cmp(n.exclMax.dec) >= 0:
			return bad("must be less than %s", n.exclMax.text)
		}
	case "string":
		if n.minLength < 0 && n.maxLength < 0 && n.format != "date-time" {
			return nil
		}
		x := jsonrpc.Unquote(raw)
		l := utf8.RuneCount(x)
		switch {
		case n.minLength == 1 && l == 0:
			return bad("must not be empty")
		case n.minLength >= 0 && l < n.minLength:
			return bad("has %d characters; the minimum is %d", l, n.minLength)
		case n.maxLength >= 0 && l > n.maxLength:
			return bad("has %d characters; the limit is %d", l, n.maxLength)
		}
		if n.format == "date-time" {
			if _, err := time.Parse(time.RFC3339Nano, string(x)); err != nil {
				return bad("%s is not an RFC 3339 date-time such as 2026-05-17T14:00:00Z", quote(string(x)))
			}
		}
	case "array":
		if n.minItems >= 0 || n.maxItems >= 0 {
			count := 0
			for range jsonrpc.Elements(raw) {
				count++
			}
			switch {
			case n.minItems >= 0 && count < n.minItems:
				return bad("has %d items; the minimum is %d", count, n.minItems)
			case n.maxItems >= 0 && count > n.maxItems:
				return bad("has %d items; the limit is %d", count, n.maxItems)
			}
		}
		if n.items != nil {
			i := 0
			for el := range jsonrpc.Elements(raw) {
				if err := n.items.validate(false, el); err != nil {
					err.Field = childPath("["+strconv.Itoa(i)+"]", err.Field)
					return err
				}
				i++
			}
		}
	case "object":
		return n.validateObject(root, raw)
	}
	return nil
}

// admits reports whether the node's type keyword lets a value of JSON type t through (an
// integer is a number too); true without a type keyword.
func (n *schemaNode) admits(t string) bool {
	return len(n.types) == 0 || slices.Contains(n.types, t) || t == "integer" && slices.Contains(n.types, "number")
}

// validateAnyOf checks that raw, of JSON type t, matches one of the anyOf branches. When none
// does, the error says what a list of types would have said: the violation inside the first
// branch whose type admits the value ("tags[0]: must be a string"), else "must be an array or
// a string", naming the branches' types in order.
func (n *schemaNode) validateAnyOf(root bool, t string, raw []byte) *ArgError {
	var first, inside *ArgError
	var types []string
	for _, b := range n.anyOf {
		err := b.validate(root, raw)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
		if inside == nil && len(b.types) > 0 && b.admits(t) {
			inside = err
		}
		for _, bt := range b.types {
			if !slices.Contains(types, bt) {
				types = append(types, bt)
			}
		}
	}
	switch {
	case inside != nil:
		return inside
	case len(types) > 0 && !slices.ContainsFunc(n.anyOf, func(b *schemaNode) bool { return len(b.types) == 0 }):
		return &ArgError{Reason: "must be " + describeTypes(types)}
	}
	return first
}

func (n *schemaNode) validateObject(root bool, raw []byte) *ArgError {
	// Members that look like a property but are not it, then unknown members, in the order
	// sent.
	for k := range jsonrpc.Fields(raw) {
		if _, ok := n.properties[string(k)]; ok {
			continue
		}
		key := string(k)
		for _, name := range n.propNames {
			if lookalike(key, name) {
				return &ArgError{Field: key, Reason: fmt.Sprintf("must be spelled exactly %q", name)}
			}
		}
		if n.closed {
			reason := "is not a known field"
			if root {
				reason = "is not a known argument"
			}
			return &ArgError{Field: key, Reason: reason}
		}
	}
	for _, r := range n.required {
		found := false
		for k := range jsonrpc.Fields(raw) {
			if string(k) == r {
				found = true
				break
			}
		}
		if !found {
			return &ArgError{Field: r, Reason: "is required"}
		}
	}
	if len(n.properties) == 0 {
		return nil
	}
	for k, v := range jsonrpc.Fields(raw) {
		if p, ok := n.properties[string(k)]; ok {
			if err := p.validate(false, v); err != nil {
				err.Field = childPath(string(k), err.Field)
				return err
			}
		}
	}
	return nil
}

// quote quotes a value for a message, shortened to 64 characters.
func quote(s string) string {
	if utf8.RuneCountInString(s) > 64 {
		s = string([]rune(s)[:64]) + "…"
	}
	return strconv.Quote(s)
}

func describeTypes(ts []string) string {
	words := make([]string, len(ts))
	for i, t := range ts {
		switch t {
		case "integer", "object", "array":
			words[i] = "an " + t
		case "null":
			words[i] = "null"
		default:
			words[i] = "a " + t
		}
	}
	return strings.Join(words, " or ")
}

// describeValues lists enum values: strings as they are, anything else as JSON.
func describeValues(vs []any) string {
	words := make([]string, len(vs))
	for i, v := range vs {
		if s, ok := v.(string); ok {
			words[i] = s
			continue
		}
		b, _ := jsonrpc.Marshal(v)
		words[i] = string(b)
	}
	return strings.Join(words, ", ")
}

// jsonEqual compares decoded JSON values; numbers compare by value (1.0 equals 1).
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		return ok && parseDecimal(x.String()).cmp(parseDecimal(y.String())) == 0
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, jsonEqual)
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && maps.EqualFunc(x, y, jsonEqual)
	case string, bool, nil:
		return a == b
	}
	return false
}

// decimal is an exact JSON number: 0.digits × 10^exp, negative when neg. digits has no leading
// or trailing zeros; "" is zero. Comparing decimals instead of float64 keeps 2^53+1 above 2^53
// and 1e400 above any maximum.
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// parseDecimal parses a JSON number (already validated).
func parseDecimal(s string) decimal {
	var d decimal
	if strings.HasPrefix(s, "-") {
		d.neg, s = true, s[1:]
	}
	mant, expText, _ := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	d.exp = int64(len(intPart)) + parseExponent(expText)
	trimmed := strings.TrimLeft(digits, "0")
	d.exp -= int64(len(digits) - len(trimmed))
	d.digits = strings.TrimRight(trimmed, "0")
	if d.digits == "" {
		return decimal{}
	}
	return d
}

// parseExponent parses an exponent, clamped to ±1e15: far beyond any number of digits a
// message can hold, so the clamp never changes an order.
func parseExponent(s string) int64 {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	s = strings.TrimLeft(s, "0")
	if len(s) > 15 {
		s = "1000000000000000"
	}
	e, _ := strconv.ParseInt(s, 10, 64) // "" → 0
	if neg {
		return -e
	}
	return e
}

func (d decimal) sign() int {
	switch {
	case d.digits == "":
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// cmp returns -1, 0 or +1 as d is less than, equal to or greater than e.
func (d decimal) cmp(e decimal) int {
	if ds, es := d.sign(), e.sign(); ds != es || ds == 0 {
		switch {
		case ds < es:
			return -1
		case ds > es:
			return 1
		}
		return 0
	}
	m := 0
	switch {
	case d.exp != e.exp:
		m = -1
		if d.exp > e.exp {
			m = 1
		}
	default:
		m = strings.Compare(d.digits, e.digits)
	}
	if d.neg {
		return -m
	}
	return m
}
