package tools

import "encoding/json"

// Small builders for the tools' JSON Schemas. Maps marshal with sorted keys, so the schemas
// that tools/list shows are stable byte for byte.

type schema = map[string]any

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

func strLen(desc string, minLen, maxLen int) schema {
	return schema{"type": "string", "description": desc, "minLength": minLen, "maxLength": maxLen}
}

func integer(desc string, lo, hi int) schema {
	return schema{"type": "integer", "description": desc, "minimum": lo, "maximum": hi}
}

func number(desc string, lo, hi float64) schema {
	return schema{"type": "number", "description": desc, "minimum": lo, "maximum": hi}
}

func boolean(desc string) schema { return schema{"type": "boolean", "description": desc} }

func timestamp(desc string) schema {
	return schema{"type": "string", "format": "date-time", "description": desc + " (RFC 3339, e.g. 2026-05-17T14:00:00Z)"}
}

func enum(desc string, values ...string) schema {
	return schema{"type": "string", "description": desc, "enum": values}
}

var idSchema = schema{"type": "integer", "description": "memory id", "minimum": 1}

var tagsSchema = schema{
	"type":        []string{"array", "string"},
	"items":       schema{"type": "string"},
	"description": "tags, as an array or a comma-separated string; normalized to lowercase [a-z0-9-]",
}

var memorySchema = schema{
	"type": "object",
	"properties": schema{
		"id":                idSchema,
		"text":              schema{"type": "string"},
		"tags":              schema{"type": "array", "items": schema{"type": "string"}},
		"importance":        schema{"type": "number"},
		"created_at":        schema{"type": "string"},
		"updated_at":        schema{"type": "string"},
		"last_confirmed_at": schema{"type": "string"},
		"expires_at":        schema{"type": "string"},
		"source_provider":   schema{"type": "string"},
		"source_client":     schema{"type": "string"},
		"capture_mode":      schema{"type": "string"},
		"session_id":        schema{"type": "string"},
		"deleted_at":        schema{"type": "string"},
		"forget_reason":     schema{"type": "string"},
		"replaced_by_id":    schema{"type": "integer"},
		"score":             schema{"type": "number"},
	},
	"required": []string{"id", "text", "tags", "created_at"},
}

func arrayOf(item schema) schema { return schema{"type": "array", "items": item} }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the schemas are literals in this package
	}
	return b
}
