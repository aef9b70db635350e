package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// schemaNode is the subset of JSON Schema that tool arguments use: type (one or a list),
// properties, required, additionalProperties: false, enum, minimum, maximum, minLength,
// maxLength, minItems, maxItems, items and format "date-time".
type schemaNode struct {
	Types      []string
	Properties map[string]*schemaNode
	Required   []string
	Closed     bool // additionalProperties: false
	Enum       []any
	Minimum    *float64
	Maximum    *float64
	MinLength  *int
	MaxLength  *int
	MinItems   *int
	MaxItems   *int
	Items      *schemaNode
	Format     string
}

// Schema is a compiled JSON Schema (the subset above) for validating arguments outside tools/call.
type Schema struct{ n *schemaNode }

// CompileSchema compiles raw.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	n, err := compileSchema(raw)
	if err != nil {
		return nil, err
	}
	return &Schema{n}, nil
}

// Validate checks one JSON value; the first violation is an *ArgError whose field is prefixed
// with prefix (e.g. "items[3]").
func (s *Schema) Validate(prefix string, raw json.RawMessage) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return &ArgError{Field: prefix, Reason: "is not valid JSON"}
	}
	return s.n.validate(prefix, v)
}

// compileSchema parses a tool's inputSchema; an empty schema accepts any object.
func compileSchema(raw json.RawMessage) (*schemaNode, error) {
	if len(raw) == 0 {
		return &schemaNode{Types: []string{"object"}}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return compileNode(m)
}

func compileNode(m map[string]any) (*schemaNode, error) {
	n := &schemaNode{}
	switch t := m["type"].(type) {
	case string:
		n.Types = []string{t}
	case []any:
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("type list holds %v", x)
			}
			n.Types = append(n.Types, s)
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		n.Properties = map[string]*schemaNode{}
		for k, v := range props {
			pm, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("property %s is not a schema", k)
			}
			c, err := compileNode(pm)
			if err != nil {
				return nil, fmt.Errorf("property %s: %w", k, err)
			}
			n.Properties[k] = c
		}
	}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				n.Required = append(n.Required, s)
			}
		}
	}
	if ap, ok := m["additionalProperties"].(bool); ok && !ap {
		n.Closed = true
	}
	if e, ok := m["enum"].([]any); ok {
		n.Enum = e
	}
	num := func(key string) *float64 {
		if f, ok := m[key].(float64); ok {
			return &f
		}
		return nil
	}
	count := func(key string) *int {
		if f, ok := m[key].(float64); ok {
			i := int(f)
			return &i
		}
		return nil
	}
	n.Minimum, n.Maximum = num("minimum"), num("maximum")
	n.MinLength, n.MaxLength = count("minLength"), count("maxLength")
	n.MinItems, n.MaxItems = count("minItems"), count("maxItems")
	if it, ok := m["items"].(map[string]any); ok {
		c, err := compileNode(it)
		if err != nil {
			return nil, fmt.Errorf("items: %w", err)
		}
		n.Items = c
	}
	n.Format, _ = m["format"].(string)
	return n, nil
}

// validateJSON checks arguments (raw JSON) against the schema; the first violation is an
// *ArgError naming the field by its path.
func (n *schemaNode) validateJSON(raw json.RawMessage) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return &ArgError{Field: "arguments", Reason: "are not valid JSON"}
	}
	if _, ok := v.(map[string]any); !ok {
		return &ArgError{Field: "arguments", Reason: "must be an object"}
	}
	return n.validate("", v)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number:
		if isInteger(x) {
			return "integer"
		}
		return "number"
	}
	return "unknown"
}

func isInteger(n json.Number) bool {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		return true
	}
	f, err := n.Float64()
	return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
}

func (n *schemaNode) validate(path string, v any) error {
	field := path
	if field == "" {
		field = "arguments"
	}
	if len(n.Types) > 0 {
		t := typeOf(v)
		ok := slices.Contains(n.Types, t) || (t == "integer" && slices.Contains(n.Types, "number"))
		if !ok {
			return &ArgError{Field: field, Reason: "must be " + describeTypes(n.Types)}
		}
	}
	if len(n.Enum) > 0 && !slices.ContainsFunc(n.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) && typeOf(v) == "string" }) {
		names := make([]string, len(n.Enum))
		for i, e := range n.Enum {
			names[i] = fmt.Sprint(e)
		}
		return &ArgError{Field: field, Reason: "must be one of " + strings.Join(names, ", ")}
	}
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		if n.Minimum != nil && f < *n.Minimum {
			return &ArgError{Field: field, Reason: fmt.Sprintf("must be at least %v", *n.Minimum)}
		}
		if n.Maximum != nil && f > *n.Maximum {
			return &ArgError{Field: field, Reason: fmt.Sprintf("must be at most %v", *n.Maximum)}
		}
	case string:
		l := utf8.RuneCountInString(x)
		if n.MinLength != nil && l < *n.MinLength {
			if *n.MinLength == 1 {
				return &ArgError{Field: field, Reason: "must not be empty"}
			}
			return &ArgError{Field: field, Reason: fmt.Sprintf("must have at least %d characters", *n.MinLength)}
		}
		if n.MaxLength != nil && l > *n.MaxLength {
			return &ArgError{Field: field, Reason: fmt.Sprintf("has %d characters; the limit is %d", l, *n.MaxLength)}
		}
		if n.Format == "date-time" {
			if _, err := time.Parse(time.RFC3339Nano, x); err != nil {
				return &ArgError{Field: field, Reason: fmt.Sprintf("%q is not an RFC 3339 date-time such as 2026-05-17T14:00:00Z", x)}
			}
		}
	case []any:
		if n.MinItems != nil && len(x) < *n.MinItems {
			return &ArgError{Field: field, Reason: fmt.Sprintf("must have at least %d items", *n.MinItems)}
		}
		if n.MaxItems != nil && len(x) > *n.MaxItems {
			return &ArgError{Field: field, Reason: fmt.Sprintf("has %d items; the limit is %d", len(x), *n.MaxItems)}
		}
		if n.Items != nil {
			for i, el := range x {
				if err := n.Items.validate(fmt.Sprintf("%s[%d]", field, i), el); err != nil {
					return err
				}
			}
		}
	case map[string]any:
		for _, r := range n.Required {
			if _, ok := x[r]; !ok {
				return &ArgError{Field: join(path, r), Reason: "is required"}
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p, ok := n.Properties[k]
			if !ok {
				if n.Closed {
					return &ArgError{Field: join(path, k), Reason: "is not a known argument"}
				}
				continue
			}
			if err := p.validate(join(path, k), x[k]); err != nil {
				return err
			}
		}
	}
	return nil
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
