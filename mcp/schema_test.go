package mcp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCompileSchema(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		want         string // "" = compiles; else a substring of the error
	}{
		{"empty is an object", ``, ""},
		{"annotations", `{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"t","description":"d","default":{},"examples":[{}],"deprecated":false}`, ""},
		{"every supported keyword", `{"type":["object","null"],"properties":{"a":{"type":"string","minLength":1,"maxLength":2,"format":"date-time","enum":["x"],"const":"x"},"b":{"type":"number","minimum":0,"maximum":1,"exclusiveMinimum":-1,"exclusiveMaximum":2},"c":{"type":"array","items":{"type":"integer"},"minItems":0,"maxItems":3}},"required":["a"],"additionalProperties":false}`, ""},
		{"boolean subschemas", `{"properties":{"a":true,"b":false}}`, ""},
		{"other formats are annotations", `{"type":"string","format":"email"}`, ""},
		{"unsupported keyword", `{"type":"string","pattern":"^a"}`, `schema: unsupported keyword "pattern"`},
		{"unsupported keyword deep", `{"properties":{"a":{"items":{"oneOf":[]}}}}`, `properties.a.items: unsupported keyword "oneOf"`},
		{"$ref to $defs", `{"$defs":{"x":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/x"}}}`, ""},
		{"$ref to definitions, escaped", `{"definitions":{"a/b~c":{"type":"string"}},"$ref":"#/definitions/a~1b~0c"}`, ""},
		{"$ref recursion through a property", `{"$defs":{"node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`, ""},
		{"$ref to the root through a property", `{"properties":{"next":{"$ref":"#"}}}`, ""},
		{"$ref loop", `{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, `refers back to itself`},
		{"$ref to itself at the root", `{"$ref":"#"}`, `refers back to itself`},
		{"$ref to nothing", `{"$ref":"#/$defs/x"}`, `$ref "#/$defs/x" points to nothing`},
		{"$ref to another document", `{"$ref":"https://example.com/s.json"}`, `only references within the schema`},
		{"$ref not a string", `{"$ref":1}`, `$ref must be a string`},
		{"$ref target with an unsupported keyword", `{"$defs":{"x":{"pattern":"a"}},"$ref":"#/$defs/x"}`, `#/$defs/x: unsupported keyword "pattern"`},
		{"unused $defs are annotations", `{"$defs":{"x":{"pattern":"a"}}}`, ""},
		{"additionalProperties schema", `{"additionalProperties":{"type":"string"}}`, "additionalProperties must be true or false"},
		{"additionalProperties null", `{"additionalProperties":null}`, "additionalProperties must be true or false"},
		{"unknown type", `{"type":"text"}`, `unknown type "text"`},
		{"type not a string", `{"type":1}`, "type must be a name"},
		{"type list with a number", `{"type":["string",1]}`, "type must be a name"},
		{"properties not an object", `{"properties":[]}`, "properties must be an object"},
		{"property not a schema", `{"properties":{"a":"string"}}`, "properties.a: a schema must be an object or a boolean"},
		{"required not a list", `{"required":"a"}`, "required must be a list"},
		{"required with a number", `{"required":["a",1]}`, "required must be a list"},
		{"empty enum", `{"enum":[]}`, "enum must be a non-empty list"},
		{"minimum a string", `{"minimum":"1"}`, "minimum must be a number"},
		{"maxLength negative", `{"maxLength":-1}`, "maxLength must be a non-negative integer"},
		{"minItems fractional", `{"minItems":1.5}`, "minItems must be a non-negative integer"},
		{"format not a string", `{"format":1}`, "format must be a string"},
		{"items as a list", `{"items":[{"type":"string"}]}`, "items: a schema must be an object or a boolean"},
		{"not JSON", `{"type":}`, "schema is not strict JSON"},
		{"duplicate key", `{"type":"string","type":"object"}`, "duplicate key"},
		{"a schema must be an object", `[]`, "a schema must be an object or a boolean"},
		{"anyOf", `{"properties":{"tags":{"anyOf":[{"type":"array","items":{"type":"string"}},{"type":"string"}],"description":"d"}}}`, ""},
		{"anyOf not a list", `{"anyOf":{"type":"string"}}`, "anyOf must be a non-empty list of schemas"},
		{"anyOf empty", `{"anyOf":[]}`, "anyOf must be a non-empty list of schemas"},
		{"anyOf branch with an unsupported keyword", `{"properties":{"a":{"anyOf":[{"type":"string"},{"pattern":"a"}]}}}`, `properties.a.anyOf[1]: unsupported keyword "pattern"`},
		{"anyOf branch not a schema", `{"anyOf":["string"]}`, "anyOf[0]: a schema must be an object or a boolean"},
		{"$ref loop through anyOf", `{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`, `refers back to itself`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CompileSchema(json.RawMessage(tc.schema))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("CompileSchema = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("CompileSchema = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestSchema_Validate(t *testing.T) {
	const obj = `{"type":"object","properties":{
		"text":{"type":"string","minLength":1,"maxLength":5},
		"code":{"type":"string","minLength":3},
		"n":{"type":"integer","minimum":1,"maximum":10},
		"x":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
		"big":{"type":"integer","maximum":9007199254740992},
		"kind":{"enum":["a",1,null,[1,2],{"k":true}]},
		"fixed":{"const":2},
		"at":{"type":"string","format":"date-time"},
		"tags":{"type":["array","string"],"items":{"type":"string","maxLength":3},"minItems":1,"maxItems":2},
		"items":{"type":"array","items":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}},
		"maybe":{"type":["string","null"]},
		"anytags":{"anyOf":[{"type":"array","items":{"type":"string","maxLength":3},"minItems":1,"maxItems":2},{"type":"string"}]},
		"until":{"anyOf":[{"type":"string","format":"date-time"},{"type":"null"}]},
		"loose":{"anyOf":[{"type":"string"},{"minimum":1}]},
		"never":false,
		"open":{"type":"object","properties":{"key":{"type":"string"}}}
	},"required":["text"],"additionalProperties":false}`
	// The json-schema-2020-12 scenario's schema of the MCP conformance suite, and more.
	const refs = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
		"$defs":{
			"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}},
			"node":{"type":"object","properties":{"name":{"type":"string"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name"]}
		},
		"properties":{
			"name":{"type":"string"},
			"address":{"$ref":"#/$defs/address"},
			"home":{"$ref":"#/$defs/address","required":["city"]},
			"closed":{"$ref":"#/$defs/address","additionalProperties":false},
			"tree":{"$ref":"#/$defs/node"}
		},
		"additionalProperties":false}`
	for _, tc := range []struct {
		name, schema, value string
		field, reason       string // "" = valid
	}{
		{"valid", obj, `{"text":"hi","n":3,"tags":["a"]}`, "", ""},
		{"tags as a string", obj, `{"text":"hi","tags":"a,b,c,d"}`, "", ""},
		{"length counts characters", obj, `{"text":"héllo"}`, "", ""},
		{"length counts characters, not UTF-16", obj, `{"text":"😀😀😀😀😀"}`, "", ""},
		{"too long in characters", obj, `{"text":"héllo!"}`, "text", "has 6 characters; the limit is 5"},
		{"required", obj, `{}`, "text", "is required"},
		{"empty", obj, `{"text":""}`, "text", "must not be empty"},
		{"minLength over 1", obj, `{"text":"a","code":"ab"}`, "code", "has 2 characters; the minimum is 3"},
		{"unknown argument", obj, `{"text":"a","zzz":1}`, "zzz", "is not a known argument"},
		{"unknown beats required", obj, `{"zzz":1}`, "zzz", "is not a known argument"},
		{"case variant", obj, `{"text":"a","TEXT":"b"}`, "TEXT", `must be spelled exactly "text"`},
		{"Kelvin-sign variant", obj, `{"text":"a","\u212Aind":"b"}`, "\u212aind", `must be spelled exactly "kind"`},
		{"long-s variant", obj, `{"text":"a","tagſ":"x"}`, "tagſ", `must be spelled exactly "tags"`},
		{"NUL-suffixed variant", obj, `{"text":"a","n\u0000":2}`, "n\x00", `must be spelled exactly "n"`},
		{"variant in an open object", obj, `{"text":"a","open":{"Key":"x","other":1}}`, "open.Key", `must be spelled exactly "key"`},
		{"open object takes unknown keys", obj, `{"text":"a","open":{"other":1}}`, "", ""},
		{"not an integer", obj, `{"text":"a","n":1.5}`, "n", "must be an integer"},
		{"2.0 is not an integer here", obj, `{"text":"a","n":2.0}`, "n", "must be an integer"},
		{"1e1 is not an integer here", obj, `{"text":"a","n":1e1}`, "n", "must be an integer"},
		{"string is not an integer", obj, `{"text":"a","n":"2"}`, "n", "must be an integer"},
		{"below minimum", obj, `{"text":"a","n":0}`, "n", "must be at least 1"},
		{"above maximum", obj, `{"text":"a","n":11}`, "n", "must be at most 10"},
		{"negative zero", obj, `{"text":"a","n":-0}`, "n", "must be at least 1"},
		{"2^53+1 above 2^53", obj, `{"text":"a","big":9007199254740993}`, "big", "must be at most 9007199254740992"},
		{"2^53 itself", obj, `{"text":"a","big":9007199254740992}`, "", ""},
		{"integer is a number", obj, `{"text":"a","x":0.5}`, "", ""},
		{"exclusive minimum", obj, `{"text":"a","x":0}`, "x", "must be greater than 0"},
		{"exclusive maximum", obj, `{"text":"a","x":1.0}`, "x", "must be less than 1"},
		{"huge number", obj, `{"text":"a","x":1e400}`, "x", "must be less than 1"},
		{"tiny number", obj, `{"text":"a","x":1e-400}`, "", ""},
		{"enum string", obj, `{"text":"a","kind":"a"}`, "", ""},
		{"enum number by value", obj, `{"text":"a","kind":1.0}`, "", ""},
		{"enum null", obj, `{"text":"a","kind":null}`, "", ""},
		{"enum array", obj, `{"text":"a","kind":[1,2]}`, "", ""},
		{"enum object", obj, `{"text":"a","kind":{"k":true}}`, "", ""},
		{"enum miss", obj, `{"text":"a","kind":"b"}`, "kind", `must be one of a, 1, null, [1,2], {"k":true}`},
		{"enum array order matters", obj, `{"text":"a","kind":[2,1]}`, "kind", `must be one of a, 1, null, [1,2], {"k":true}`},
		{"const", obj, `{"text":"a","fixed":2}`, "", ""},
		{"const miss", obj, `{"text":"a","fixed":"2"}`, "fixed", "must be 2"},
		{"date-time", obj, `{"text":"a","at":"2026-05-17T14:00:00.123+02:00"}`, "", ""},
		{"date-time without zone", obj, `{"text":"a","at":"2026-05-17T14:00:00"}`, "at", `"2026-05-17T14:00:00" is not an RFC 3339 date-time such as 2026-05-17T14:00:00Z`},
		{"date only", obj, `{"text":"a","at":"2026-05-17"}`, "at", `"2026-05-17" is not an RFC 3339 date-time such as 2026-05-17T14:00:00Z`},
		{"long bad date is shortened", obj, `{"text":"a","at":"` + strings.Repeat("x", 100) + `"}`, "at", `"` + strings.Repeat("x", 64) + `…" is not an RFC 3339 date-time such as 2026-05-17T14:00:00Z`},
		{"type list", obj, `{"text":"a","tags":5}`, "tags", "must be an array or a string"},
		{"too few items", obj, `{"text":"a","tags":[]}`, "tags", "has 0 items; the minimum is 1"},
		{"too many items", obj, `{"text":"a","tags":["a","b","c"]}`, "tags", "has 3 items; the limit is 2"},
		{"item path", obj, `{"text":"a","tags":["a","long"]}`, "tags[1]", "has 4 characters; the limit is 3"},
		{"nested path", obj, `{"text":"a","items":[{"text":"x"},{"text":"y"},{"text":"z"},{"text":7}]}`, "items[3].text", "must be a string"},
		{"nested required", obj, `{"text":"a","items":[{}]}`, "items[0].text", "is required"},
		{"nested unknown field", obj, `{"text":"a","items":[{"text":"x","more":1}]}`, "items[0].more", "is not a known field"},
		{"anyOf array", obj, `{"text":"a","anytags":["a","b"]}`, "", ""},
		{"anyOf string", obj, `{"text":"a","anytags":"a,b,c,d"}`, "", ""},
		{"anyOf names the branches' types, as a type list does", obj, `{"text":"a","anytags":5}`, "anytags", "must be an array or a string"},
		{"anyOf object", obj, `{"text":"a","anytags":{}}`, "anytags", "must be an array or a string"},
		{"anyOf reports inside the branch of the value's type", obj, `{"text":"a","anytags":["a","long"]}`, "anytags[1]", "has 4 characters; the limit is 3"},
		{"anyOf too many items", obj, `{"text":"a","anytags":["a","b","c"]}`, "anytags", "has 3 items; the limit is 2"},
		{"anyOf too few items", obj, `{"text":"a","anytags":[]}`, "anytags", "has 0 items; the minimum is 1"},
		{"anyOf nullable date-time", obj, `{"text":"a","until":"2026-05-17T14:00:00Z"}`, "", ""},
		{"anyOf null", obj, `{"text":"a","until":null}`, "", ""},
		{"anyOf bad date-time", obj, `{"text":"a","until":"tomorrow"}`, "until", `"tomorrow" is not an RFC 3339 date-time such as 2026-05-17T14:00:00Z`},
		{"anyOf nullable wrong type", obj, `{"text":"a","until":5}`, "until", "must be a string or null"},
		{"anyOf with an untyped branch", obj, `{"text":"a","loose":2}`, "", ""},
		{"anyOf with an untyped branch fails in the first", obj, `{"text":"a","loose":0}`, "loose", "must be a string"},
		{"null allowed", obj, `{"text":"a","maybe":null}`, "", ""},
		{"null refused", obj, `{"text":null}`, "text", "must be a string"},
		{"false schema", obj, `{"text":"a","never":1}`, "never", "is not allowed"},
		{"root type", obj, `[]`, "arguments", "must be an object"},
		{"empty schema takes anything", `{}`, `[1,"x",null]`, "", ""},
		{"$ref", refs, `{"name":"a","address":{"street":"s","city":"c"}}`, "", ""},
		{"$ref violation", refs, `{"address":{"street":1}}`, "address.street", "must be a string"},
		{"$ref with a sibling keyword", refs, `{"home":{"street":"s"}}`, "home.city", "is required"},
		{"$ref and additionalProperties see only their own properties", refs, `{"closed":{"city":"c"}}`, "closed.city", "is not a known field"},
		{"recursive $ref", refs, `{"tree":{"name":"a","kids":[{"name":"b","kids":[{"name":"c"}]}]}}`, "", ""},
		{"recursive $ref violation", refs, `{"tree":{"name":"a","kids":[{"name":"b","kids":[{"name":3}]}]}}`, "tree.kids[0].kids[0].name", "must be a string"},
		{"$ref at the root", `{"$defs":{"o":{"type":"object","required":["a"]}},"$ref":"#/$defs/o"}`, `{}`, "a", "is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := CompileSchema(json.RawMessage(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			err = s.Validate("", json.RawMessage(tc.value))
			if tc.field == "" {
				if err != nil {
					t.Errorf("Validate(%s) = %v, want nil", tc.value, err)
				}
				return
			}
			var ae *ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("Validate(%s) = %v, want an *ArgError", tc.value, err)
			}
			if got, want := *ae, (ArgError{tc.field, tc.reason}); got != want {
				t.Errorf("Validate(%s) = %q: %q, want %q: %q", tc.value, got.Field, got.Reason, want.Field, want.Reason)
			}
		})
	}
}

func TestSchema_ValidatePrefix(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, value   string
		field, reason string
	}{
		{"field under the prefix", `{"text":1}`, "items[3].text", "must be a string"},
		{"the value itself", `"x"`, "items[3]", "must be an object"},
		{"required under the prefix", `{}`, "items[3].text", "is required"},
		{"not JSON", `{"text":`, "items[3]", "is not valid JSON"},
		{"two values", `{} {}`, "items[3]", "is not valid JSON"},
		{"duplicate keys", `{"text":"a","text":"b"}`, "items[3]", "is not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ae *ArgError
			if err := s.Validate("items[3]", json.RawMessage(tc.value)); !errors.As(err, &ae) {
				t.Fatalf("Validate = %v, want an *ArgError", err)
			}
			if got, want := *ae, (ArgError{tc.field, tc.reason}); got != want {
				t.Errorf("got %q: %q, want %q: %q", got.Field, got.Reason, want.Field, want.Reason)
			}
		})
	}
}
