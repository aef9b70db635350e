package tools

import (
	_ "embed"

	"github.com/ownsona/ownsona/mcp"
)

// The MCP App (extension io.modelcontextprotocol/ui, ext-apps specification 2026-01-26):
// recall, search_memory and list_memories name one ui:// resource in their _meta, and a host
// that renders apps (Claude, ChatGPT) fetches it with resources/read and shows it in a
// sandboxed frame beside the tool's result: memory cards whose confirm, edit-tags and forget
// buttons call those tools through the host, so scopes and the approval gate apply. Hosts that
// render no apps ignore the metadata and keep the text and structuredContent.

const (
	// appURI is the app's resource.
	appURI = "ui://ownsona/memories.html"
	// appMIMEType is the MIME type of an MCP App's HTML.
	appMIMEType = "text/html;profile=mcp-app"
	// uiExtension is the extension's identifier in capabilities.
	uiExtension = "io.modelcontextprotocol/ui"
)

// appHTML is the app: one self-contained HTML file, its style and script inline, nothing from
// another origin.
//
//go:embed ui/memories.html
var appHTML string

// appTools are the tools whose results the app shows: the app's resource is offered when the
// allowlist lets one of them through.
var appTools = []string{"recall", "search_memory", "list_memories"}

// appMeta is the _meta of a tool whose result the app shows: _meta.ui.resourceUri, and the
// flat "ui/resourceUri" that hosts older than the specification's stable release read. The
// tool stays visible to the model and callable from the app.
func appMeta() map[string]any {
	return map[string]any{
		"ui":             map[string]any{"resourceUri": appURI, "visibility": []string{"model", "app"}},
		"ui/resourceUri": appURI,
	}
}

// appResourceMeta is the app resource's _meta, in resources/list and on its contents: a
// content security policy that allows no other origin at all (no connections, no scripts,
// styles, images or fonts from elsewhere, no frames, no base URI), and a border from the host.
func appResourceMeta() map[string]any {
	return map[string]any{"ui": map[string]any{
		"csp": map[string]any{
			"connectDomains": []string{}, "resourceDomains": []string{},
			"frameDomains": []string{}, "baseUriDomains": []string{},
		},
		"prefersBorder": true,
	}}
}

// appResource is the app's entry in resources/list.
var appResource = mcp.Resource{URI: appURI, Name: "memories-app", Title: "Memories (MCP App)",
	Description: "Shows the memories recall, search_memory and list_memories return as cards, with confirm, edit tags and forget",
	MIMEType:    appMIMEType, Meta: appResourceMeta()}

// extensions are the MCP extensions ownsona supports, for capabilities.extensions.
func extensions() map[string]any {
	return map[string]any{uiExtension: map[string]any{"mimeTypes": []string{appMIMEType}}}
}

// readApp is resources/read of the app.
func readApp() []mcp.ResourceContents {
	return []mcp.ResourceContents{{URI: appURI, MIMEType: appMIMEType, Text: appHTML, Meta: appResourceMeta()}}
}
