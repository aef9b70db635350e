package tools

// JSON Schemas of the tools. A tool's arguments are described once, by their Go type: schemaOf
// derives the input schema from the argument struct's fields and tags, so that the type the
// handler decodes and the schema clients see cannot disagree. Output schemas are built with the
// small builders below. Maps marshal with sorted keys, so tools/list is stable byte for byte.
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
// Embedded structs lend their fields. The types tagsArg (tags as an array or a comma-separated
// string) and batch[T] (an array of T, decoded item by item) describe themselves.
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
	"strconv"
	"strings"
)

type schema = map[string]any

// schemaOf is the input schema of the argument type T: an object that admits no other property.
func schemaOf[T any]() schema { return objectOf(reflect.TypeFor[T]()) }

// describer is a type that gives its own schema (tagsArg, batch[T]).
type describer interface {
	describe(desc string, opts map[string]string) schema
}

func objectOf(t reflect.Type) schema {
	props := schema{}
	var required []string
	addFields(t, props, &required)
	return object(props, required...)
}

func addFields(t reflect.Type, props schema, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			addFields(f.Type, props, required)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		opts := parseOpts(f.Tag.Get("schema"))
		props[name] = propertyOf(f.Type, f.Tag.Get("desc"), opts)
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

var describerType = reflect.TypeFor[describer]()

func propertyOf(t reflect.Type, desc string, opts map[string]string) schema {
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
	switch t.Kind() {
	case reflect.String:
		s["type"] = "string"
		bound(s, opts, "minLength", "maxLength", false)
		if e, ok := opts["enum"]; ok {
			s["enum"] = strings.Split(e, "|")
		}
	case reflect.Int, reflect.Int64, reflect.Uint64:
		s["type"] = "integer"
		bound(s, opts, "minimum", "maximum", false)
	case reflect.Float64, reflect.Float32:
		s["type"] = "number"
		bound(s, opts, "minimum", "maximum", true)
	case reflect.Bool:
		s["type"] = "boolean"
	case reflect.Slice:
		s["type"] = "array"
		if _, ok := opts["id"]; ok {
			s["items"] = idSchema
		} else {
			s["items"] = propertyOf(t.Elem(), "", nil)
		}
		bound(s, opts, "minItems", "maxItems", false)
	case reflect.Struct:
		s = objectOf(t)
	default:
		panic(fmt.Sprintf("tools: no schema for %s", t)) // the argument types are in this package
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
	s := schema{"type": "array", "items": objectOf(reflect.TypeFor[T]())}
	bound(s, opts, "minItems", "maxItems", false)
	if desc != "" {
		s["description"] = desc
	}
	return s
}

// loose is s with the items of its batch property validated only as objects: the tool
// validates each item itself (rpc.Tool.ArgumentSchema).
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

// output is an output schema: open to fields added later, "ok" always present.
func output(props schema) schema {
	p := schema{"ok": schema{"type": "boolean"}, "error": errorSchema}
	for k, v := range props {
		p[k] = v
	}
	return schema{"type": "object", "properties": p, "required": []string{"ok"}}
}

var errorSchema = schema{
	"type": "object",
	"properties": schema{
		"code":    str("machine-readable error code"),
		"message": str("what went wrong"),
		"field":   str("the argument at fault"),
		"reason":  str("why it was refused"),
	},
	"required": []string{"code", "message"},
}

func str(desc string) schema { return schema{"type": "string", "description": desc} }

var (
	typeString  = schema{"type": "string"}
	typeNumber  = schema{"type": "number"}
	typeInteger = schema{"type": "integer"}
	typeBoolean = schema{"type": "boolean"}
	typeNull    = schema{"type": "null"}
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

var memorySchema = schema{
	"type": "object",
	"properties": schema{
		"id":                idSchema,
		"text":              typeString,
		"tags":              arrayOf(typeString),
		"importance":        typeNumber,
		"created_at":        typeString,
		"updated_at":        typeString,
		"last_confirmed_at": typeString,
		"expires_at":        typeString,
		"source_provider":   typeString,
		"source_client":     typeString,
		"capture_mode":      typeString,
		"session_id":        typeString,
		"deleted_at":        typeString,
		"forget_reason":     typeString,
		"replaced_by_id":    typeInteger,
		"supersedes":        arrayOf(idSchema),
		"superseded_by":     idSchema,
		"score":             typeNumber,
	},
	"required": []string{"id", "text", "tags", "created_at"},
}

func arrayOf(item schema) schema { return schema{"type": "array", "items": item} }

// summaryOf is the schema of a batch's summary: integer counts.
func summaryOf(fields ...string) schema {
	p := schema{}
	for _, f := range fields {
		p[f] = typeInteger
	}
	return schema{"type": "object", "properties": p}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the schemas are literals in this package
	}
	return b
}
