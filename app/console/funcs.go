package console

import (
	"fmt"
	"html/template"
	"strings"
	"time"
)

// funcs are the templates' helpers. None returns HTML: everything is escaped.
var funcs = template.FuncMap{
	"when":     when,
	"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"whenp":    func(t *time.Time) string { return whenPtr(t, "never") },
	"seconds":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	"writer":   writer,
	"mib":      mib,
	"join":     strings.Join,
	"duration": duration,
	"ms":       func(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) },
}

// when shows a time in UTC to the minute.
func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func whenPtr(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return when(*t)
}

// writer says who wrote a memory, for a person: the client (an OAuth client's name, a
// personal access token, the console, a local stdio client, an import), the MCP client that
// said its name (provider) when there is one, and whether the assistant inferred it rather
// than was asked to remember it.
func writer(client, provider, mode string) string {
	var who string
	switch {
	case strings.HasPrefix(client, "pat:"):
		who = "the token “" + strings.TrimPrefix(client, "pat:") + "”"
	case client == "console":
		who = "you, in the console"
	case client == "stdio":
		who = "a local client (stdio)"
	case client == "" || client == "unknown":
		who = "an unknown client"
	default:
		who = client
	}
	if provider != "" && provider != "unknown" && provider != client {
		who += " through " + provider
	}
	switch mode {
	case "inferred":
		who += ", on its own initiative (inferred)"
	case "import":
		who += ", imported"
	}
	return who
}

// mib shows a size in MiB, with one decimal under 10 MiB.
func mib(n int64) string {
	v := float64(n) / (1 << 20)
	if v < 10 {
		return fmt.Sprintf("%.1f MiB", v)
	}
	return fmt.Sprintf("%.0f MiB", v)
}

// duration shows an uptime as days, hours and minutes.
func duration(d time.Duration) string {
	d = d.Truncate(time.Minute)
	days := int(d / (24 * time.Hour))
	d -= time.Duration(days) * 24 * time.Hour
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	switch {
	case days > 0:
		return fmt.Sprintf("%d d %d h", days, h)
	case h > 0:
		return fmt.Sprintf("%d h %d min", h, m)
	}
	return fmt.Sprintf("%d min", m)
}
