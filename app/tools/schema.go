package tools

// JSON Schemas of the tools. A tool's arguments and its payload are described once, by their Go
// types: schemaOf derives the input schema from the argument struct's fields and tags, and
// outputOf the output schema from the payload's, so that the types the handler decodes and
// encodes and the schemas clients see cannot disagree. Maps marshal with sorted keys, so
// tools/list is stable byte for byte.
//
// A field becomes a property named by its json tag, typed by its Go type (string, integer,
// number, boolean, array, object; pointers are optional values), described by its desc tag, and
// constrained by its schema tag, a comma-separated list of:
//
//	required       the property is required
//	min=N, max=N   minLength/maxLength of a string, minimum/maximum of a number, minItems/maxItems of an array
//	enum=a|b|c     the allowed strings
//	time           an RFC 3339 timestamp (format date-time; the description says so)
//	format=F       format F, description as given
//	nullable       null is allowed too (anyOf the property's schema and {"type":"null"})
//	id             a memory id (integer from 1, described as such); on a slice, its items are
//
// Embedded structs lend their fields (a field of the outer struct hides one of the same name
// below it, as encoding/json has it). The types tagsArg (tags as an array or a comma-separated
// string) and batch[T] (an array of T, decoded item by item) describe themselves.
//
// An output schema differs where a payload does: its objects are open (a client must accept
// fields added later), so no additionalProperties; a time.Time is a string (with format=date-time
// where the schema says so); and a pointer field without omitempty is nullable, as encoding/json
// writes null for nil. The tag options are the same; required names what every payload of the
// type carries. A slice is never null in a payload: the tools send [] for none.
//
// Every schema names one type at a time: a value of several types is anyOf branches of one
// type each ({"anyOf":[{"type":"array",…},{"type":"string"}]}), never "type": [...], which
// clients that map tool schemas onto a single-type dialect (several model providers' function
// declarations) reject or mangle. MCP Inspector's --strict run reports such lists.

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

type schema = map[string]any

// schemaOf is the input schema of the argument type T: an object that admits no other property.
func schemaOf[T any]() schema { return ofArgs.objectOf(reflect.TypeFor[T]()) }

// outputOf is the output schema of the payload type P. A payload that begins with "ok" (an ok
// field) requires it, and declares "error" too: a failed call's payload is {"ok": false,
// "error": {…}} (errorPayload). A payload in another system's shape (OpenAI's search and
// fetch, which have no ok) declares ok and error all the same, for its failures, and requires
// neither.
func outputOf[P any]() schema {
	s := ofPayloads.objectOf(reflect.TypeFor[P]())
	props := s["properties"].(schema)
	_, begins := props["ok"]
	props["ok"] = schema{"type": "boolean"}
	props["error"] = ofPayloads.objectOf(reflect.TypeFor[toolError]())
	if begins {
		s["required"] = []string{"ok"}
	}
	return s
}

// deriver derives the schemas of one direction: arguments (input) or payloads (output).
type deriver struct{ out bool }

var (
	ofArgs     = deriver{}
	ofPayloads = deriver{out: true}
)

// describer is a type that gives its own schema (tagsArg, batch[T]).
type describer interface {
	describe(desc string, opts map[string]string) schema
}

func (d deriver) objectOf(t reflect.Type) schema {
	props := schema{}
	var required []string
	d.addFields(t, props, &required, false)
	if d.out {
		s := schema{"type": "object", "properties": props}
		if len(required) > 0 {
			s["required"] = required
		}
		return s
	}
	return object(props, required...)
}

// addFields adds the properties of struct t's fields; those of an embedded struct (below) do
// not replace one of the outer struct's.
func (d deriver) addFields(t reflect.Type, props schema, required *[]string, below bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			d.addFields(ft, props, required, true)
			continue
		}
		name, jsonOpts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		if _, taken := props[name]; taken && below {
			continue
		}
		opts := parseOpts(f.Tag.Get("schema"))
		if d.out && f.Type.Kind() == reflect.Pointer && !slices.Contains(strings.Split(jsonOpts, ","), "omitempty") {
			opts["nullable"] = "" // encoding/json writes null for nil
		}
		props[name] = d.propertyOf(f.Type, f.Tag.Get("desc"), opts)
		if _, ok := opts["required"]; ok {
			*required = append(*required, name)
		}
	}
}

func parseOpts(tag string) map[string]string {
	opts := map[string]string{}
	for part := range strings.SplitSeq(tag, ",") {
		if part = strings.TrimSpace(part); part != "" {
			k, v, _ := strings.Cut(part, "=")
			opts[k] = v
		}
	}
	return opts
}

var (
	describerType = reflect.TypeFor[describer]()
	timeType      = reflect.TypeFor[time.Time]()
)

func (d deriver) propertyOf(t reflect.Type, desc string, opts map[string]string) schema {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(describerType) {
		return reflect.Zero(t).Interface().(describer).describe(desc, opts)
	}
	if _, ok := opts["id"]; ok && t.Kind() != reflect.Slice {
		return idSchema
	}
	s := schema{}
	switch k := t.Kind(); {
	case t == timeType && d.out: // RFC 3339, as time.Time marshals
		s["type"] = "string"
	case k == reflect.String:
		s["type"] = "string"
		bound(s, opts, "minLength", "maxLength", false)
		if e, ok := opts["enum"]; ok {
			s["enum"] = strings.Split(e, "|")
		}
	case k == reflect.Int, k == reflect.Int64, k == reflect.Uint64:
		s["type"] = "integer"
		bound(s, opts, "minimum", "maximum", false)
	case k == reflect.Float64, k == reflect.Float32:
		s["type"] = "number"
		bound(s, opts, "minimum", "maximum", true)
	case k == reflect.Bool:
		s["type"] = "boolean"
	case k == reflect.Slice:
		s["type"] = "array"
		if _, ok := opts["id"]; ok {
			s["items"] = idSchema
		} else {
			s["items"] = d.propertyOf(t.Elem(), "", nil)
		}
		bound(s, opts, "minItems", "maxItems", false)
	case k == reflect.Struct:
		s = d.objectOf(t)
	default:
		panic(fmt.Sprintf("tools: no schema for %s", t)) // the argument and payload types are in this package
	}
	if _, ok := opts["time"]; ok {
		s["format"] = "date-time"
		desc += " (RFC 3339, e.g. 2026-05-17T14:00:00Z)"
	}
	if f, ok := opts["format"]; ok {
		s["format"] = f
	}
	if _, ok := opts["nullable"]; ok {
		s = orNull(s)
	}
	if desc != "" {
		s["description"] = desc
	}
	return s
}

// orNull is s or null: {"anyOf":[s,{"type":"null"}]}.
func orNull(s schema) schema { return schema{"anyOf": []schema{s, typeNull}} }

// bound sets the lower and upper bound keywords from min= and max=.
func bound(s schema, opts map[string]string, lo, hi string, float bool) {
	for key, opt := range map[string]string{lo: "min", hi: "max"} {
		v, ok := opts[opt]
		if !ok {
			continue
		}
		if float {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				panic(fmt.Sprintf("tools: %s=%q", opt, v))
			}
			s[key] = f
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			panic(fmt.Sprintf("tools: %s=%q", opt, v))
		}
		s[key] = n
	}
}

// tagsArg is a "tags" argument: an array of strings or one comma-separated string, parsed by
// memtext.ParseTags.
type tagsArg json.RawMessage

func (t *tagsArg) UnmarshalJSON(b []byte) error {
	*t = append((*t)[:0], b...)
	return nil
}

func (tagsArg) describe(string, map[string]string) schema { return tagsSchema }

// batch is an array argument of T items, kept raw so that each item is validated and decoded on
// its own and a bad one fails alone.
type batch[T any] []json.RawMessage

func (batch[T]) describe(desc string, opts map[string]string) schema {
	s := schema{"type": "array", "items": ofArgs.objectOf(reflect.TypeFor[T]())}
	bound(s, opts, "minItems", "maxItems", false)
	if desc != "" {
		s["description"] = desc
	}
	return s
}

// loose is s with the items of its batch property validated only as objects: the tool
// validates each item itself (mcp.Tool.ArgumentSchema).
func loose(s schema, prop string) schema {
	props := schema{}
	for k, v := range s["properties"].(schema) {
		props[k] = v
	}
	items := schema{}
	for k, v := range props[prop].(schema) {
		items[k] = v
	}
	items["items"] = schema{"type": "object"}
	props[prop] = items
	out := schema{}
	for k, v := range s {
		out[k] = v
	}
	out["properties"] = props
	return out
}

func object(props schema, required ...string) schema {
	s := schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

var (
	typeString = schema{"type": "string"}
	typeNull   = schema{"type": "null"}
)

// idSchema is a memory id: bbolt's sequence numbers, which never reach 2^63 (a larger number
// is refused by the schema, never silently wrapped or looked up).
var idSchema = schema{"type": "integer", "description": "memory id", "minimum": 1, "maximum": maxID}

// maxID is the largest memory id, 2^63-1.
const maxID int64 = math.MaxInt64

var tagsSchema = schema{
	"anyOf":       []schema{arrayOf(typeString), typeString},
	"description": "tags, as an array or a comma-separated string; normalized to lowercase [a-z0-9-]",
}

func arrayOf(item schema) schema { return schema{"type": "array", "items": item} }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the schemas are literals in this package
	}
	return b
}
