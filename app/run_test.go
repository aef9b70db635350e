package app

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestNextSteps_write: the first start's next steps name the console, and every command and the
// desktop clients' JSON carry the binary's and the file's absolute paths, quoted for a shell
// where they need it, so that they work when pasted anywhere (issue 30).
func TestNextSteps_write(t *testing.T) {
	n := nextSteps{Resource: "https://mem.example.com/mcp", Console: "https://mem.example.com/console",
		Bin: "/opt/own sona/bin/ownsona", DB: "/home/me/it's/ownsona.db"}
	var b strings.Builder
	n.write(&b)
	out := b.String()
	for _, want := range []string{
		"the console:          https://mem.example.com/console",
		"claude mcp add --transport http ownsona https://mem.example.com/mcp",
		`'/opt/own sona/bin/ownsona' token create --name my-script --db '/home/me/it'\''s/ownsona.db'`,
		`Lost the password? '/opt/own sona/bin/ownsona' password set --db '/home/me/it'\''s/ownsona.db'`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("next steps lack %q:\n%s", want, out)
		}
	}
	start := strings.Index(out, "{")
	end := strings.LastIndex(out, "}")
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if start < 0 || json.Unmarshal([]byte(out[start:end+1]), &cfg) != nil {
		t.Fatalf("no desktop JSON in:\n%s", out)
	}
	s := cfg.MCPServers["ownsona"]
	if s.Command != n.Bin || strings.Join(s.Args, " ") != "stdio --db "+n.DB {
		t.Errorf("desktop JSON = %+v, want the binary and the file's absolute paths", s)
	}
}

// TestAbsPath: a relative --db is printed absolute, as a desktop client needs it.
func TestAbsPath(t *testing.T) {
	got := absPath("ownsona.db")
	if !filepath.IsAbs(got) || filepath.Base(got) != "ownsona.db" {
		t.Errorf("absPath(ownsona.db) = %q", got)
	}
	if exe := executable(); !filepath.IsAbs(exe) {
		t.Errorf("executable() = %q, want an absolute path", exe)
	}
}

// TestHelp_width: `ownsona help` and every command's --help fit in 100 columns and spell every
// flag one way, --name (issue 30).
func TestHelp_width(t *testing.T) {
	singleDash := regexp.MustCompile(`(?m)^\s+-[a-z]`)
	pages := map[string][]string{"help": {"help"}}
	for _, c := range commands() {
		if c.name != "help" && c.name != "version" {
			pages[c.name+" --help"] = []string{c.name, "--help"}
		}
	}
	pages["token create --help"] = []string{"token", "create", "--help"}
	for name, args := range pages {
		var out, errOut strings.Builder
		if err := Run(t.Context(), args, func(string) string { return "" }, strings.NewReader(""), &out, &errOut); err != nil {
			t.Errorf("ownsona %s: %v\n%s", name, err, errOut.String())
			continue
		}
		if out.Len() == 0 {
			t.Errorf("ownsona %s printed nothing", name)
		}
		for i, line := range strings.Split(out.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > 100 {
				t.Errorf("ownsona %s, line %d is %d columns:\n%s", name, i+1, n, line)
			}
		}
		if m := singleDash.FindString(out.String()); m != "" {
			t.Errorf("ownsona %s spells a flag with one dash: %q", name, m)
		}
	}
}
