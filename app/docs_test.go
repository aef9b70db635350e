package app

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The documentation is README.md and docs/*.md at the module's root. These tests hold it to the
// binary: every `ownsona ...` command line names a real command, subcommand and flags; the
// settings table of docs/configuration.md is what `ownsona help` prints; every link between the
// pages, and every anchor, resolves.

// docFiles are the documentation's files, relative to the module's root: README.md first.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no docs/*.md at the module's root")
	}
	files := []string{"README.md"}
	for _, p := range pages {
		files = append(files, strings.TrimPrefix(filepath.ToSlash(p), "../"))
	}
	return files
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// help runs `ownsona ARGS` in process with an empty environment and returns what it printed.
func help(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut strings.Builder
	if err := Run(t.Context(), args, func(string) string { return "" }, strings.NewReader(""), &out, &errOut); err != nil {
		t.Fatalf("ownsona %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// cliCommand is what a command's --help says it takes: its flags (the --name of every flag
// and setting it prints) and, for a command with subcommands, each subcommand's flags.
type cliCommand struct {
	flags map[string]bool
	subs  map[string]map[string]bool // nil: the command has no subcommands
}

var (
	// helpFlag is a flag line of --help: a command's flag ("  --db PATH") or a setting
	// ("  --db, OWNSONA_DB (default ownsona.db)").
	helpFlag = regexp.MustCompile(`(?m)^\s+--([a-z0-9][a-z0-9-]*)\b`)
	// helpSub is a subcommand's line in the --help of a command that has subcommands
	// ("  ownsona token create --name NAME ...").
	helpSub = regexp.MustCompile(`(?m)^\s+ownsona ([a-z-]+) ([a-z][a-z-]*)\b`)
)

// helpFlags are the flags a --help lists, with the help flags themselves.
func helpFlags(text string) map[string]bool {
	flags := map[string]bool{"help": true, "h": true}
	for _, m := range helpFlag.FindAllStringSubmatch(text, -1) {
		flags[m[1]] = true
	}
	return flags
}

// cliTable reads every command of commands() and its subcommands from their --help, as a user
// would.
func cliTable(t *testing.T) map[string]cliCommand {
	t.Helper()
	table := map[string]cliCommand{}
	for _, c := range commands() {
		text := help(t, c.name, "--help")
		cmd := cliCommand{flags: helpFlags(text)}
		if strings.Contains(text, "SUBCOMMAND --help") {
			cmd.subs = map[string]map[string]bool{}
			for _, m := range helpSub.FindAllStringSubmatch(text, -1) {
				if m[1] == c.name {
					cmd.subs[m[2]] = helpFlags(help(t, c.name, m[2], "--help"))
				}
			}
			if len(cmd.subs) == 0 {
				t.Fatalf("ownsona %s --help names no subcommand:\n%s", c.name, text)
			}
		}
		table[c.name] = cmd
	}
	return table
}

// docText is a piece of a page that may hold a command line: a line of a code block (with
// its continuation lines) or an inline code span.
type docText struct {
	line int
	text string
}

var (
	fence      = regexp.MustCompile("^\\s*```")
	inlineCode = regexp.MustCompile("`([^`]+)`")
)

// codeTexts returns a page's code: each code block's lines, continuation lines (ending in \)
// joined, and every inline code span of the prose, which may break across lines.
func codeTexts(page string) []docText {
	var out []docText
	lines := strings.Split(page, "\n")
	inBlock := false
	var prose strings.Builder
	var proseLines []int // line number of each line appended to prose
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if fence.MatchString(line) {
			inBlock = !inBlock
			prose.WriteString("\n")
			proseLines = append(proseLines, i+1)
			continue
		}
		if !inBlock {
			prose.WriteString(line + "\n")
			proseLines = append(proseLines, i+1)
			continue
		}
		start := i
		for strings.HasSuffix(strings.TrimRight(line, " "), "\\") && i+1 < len(lines) && !fence.MatchString(lines[i+1]) {
			i++
			line = strings.TrimSuffix(strings.TrimRight(line, " "), "\\") + " " + lines[i]
		}
		out = append(out, docText{start + 1, line})
	}
	text := prose.String()
	for _, m := range inlineCode.FindAllStringSubmatchIndex(text, -1) {
		line := proseLines[strings.Count(text[:m[0]], "\n")]
		out = append(out, docText{line, strings.ReplaceAll(text[m[2]:m[3]], "\n", " ")})
	}
	return out
}

// invocation is one `ownsona ...` command line found in a page: the arguments after the
// program's name.
type invocation struct {
	line int
	args []string
}

// shellWrappers may stand before a command without being it.
var shellWrappers = map[string]bool{"sudo": true, "env": true, "exec": true, "time": true, "nohup": true}

var envAssign = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// invocations finds the command lines of ownsona in a piece of code: where ownsona (or a path
// ending in /ownsona) stands at a command's place, at the start of a shell command (after
// variable assignments and sudo, after a pipe, ;, &&, ||, $( or a backquote), or after a
// wrapper's "--" (claude mcp add NAME -- ownsona stdio). The arguments run to the end of that
// shell command; a # starts a comment. Quotes are dropped, so "$(ownsona hash-password)" is
// found too.
func invocations(d docText) []invocation {
	text := strings.NewReplacer(`"`, "", `'`, "", "$(", " $( ", "`", " ` ").Replace(d.text)
	var out []invocation
	var cur *invocation
	atStart := true
	for _, tok := range strings.Fields(text) {
		closes := false
		if trimmed := strings.TrimRight(tok, ");"); trimmed != tok && trimmed != "" {
			tok, closes = trimmed, true
		}
		switch {
		case strings.HasPrefix(tok, "#"):
			return out
		case tok == "|" || tok == "||" || tok == "&&" || tok == ";" || tok == "$(" || tok == "`" || tok == ")":
			cur, atStart = nil, true
			continue
		case cur != nil:
			cur.args = append(cur.args, tok)
		case tok == "--":
			atStart = true
		case atStart && (shellWrappers[tok] || envAssign.MatchString(tok) && path.Base(tok) != "ownsona"):
			// still before the command
		case atStart && path.Base(strings.TrimPrefix(tok, envAssign.FindString(tok))) == "ownsona":
			out = append(out, invocation{line: d.line})
			cur = &out[len(out)-1]
		default:
			atStart = false
		}
		if closes {
			cur, atStart = nil, true
		}
	}
	return out
}

// placeholder is a word in capitals that stands for any command or argument (COMMAND).
var placeholder = regexp.MustCompile(`^[A-Z][A-Z_]*$`)

// checkInvocation returns what is wrong with one command line, or nothing.
func checkInvocation(table map[string]cliCommand, args []string) []string {
	if len(args) == 0 || placeholder.MatchString(args[0]) {
		return nil
	}
	name := args[0]
	if slices.Contains([]string{"--help", "-h", "--version"}, name) {
		return nil
	}
	cmd, ok := table[name]
	if !ok {
		return []string{fmt.Sprintf("%q is not a command of ownsona", name)}
	}
	flags, rest := cmd.flags, args[1:]
	where := "ownsona " + name
	if cmd.subs != nil && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") && !placeholder.MatchString(rest[0]) {
		sub, ok := cmd.subs[rest[0]]
		if !ok {
			return []string{fmt.Sprintf("%q is not a subcommand of %s", rest[0], where)}
		}
		flags, rest, where = sub, rest[1:], where+" "+rest[0]
	}
	var bad []string
	for _, arg := range rest {
		arg = strings.Trim(arg, "[]")
		switch {
		case strings.HasPrefix(arg, "--") && len(arg) > 2:
			if f, _, _ := strings.Cut(arg[2:], "="); !flags[f] {
				bad = append(bad, fmt.Sprintf("%s has no flag --%s", where, f))
			}
		case len(arg) > 1 && arg[0] == '-' && unicode.IsLetter(rune(arg[1])) && arg != "-h":
			bad = append(bad, fmt.Sprintf("%s: %s is spelled with one dash; ownsona's flags are --name", where, arg))
		}
	}
	return bad
}

// TestDocs_Commands: every `ownsona ...` command line in README.md and docs/*.md, in a code
// block or inline code, names a command (and subcommand) of the binary, and every --flag it
// uses is one that command's --help lists.
func TestDocs_Commands(t *testing.T) {
	table := cliTable(t)
	for _, file := range docFiles(t) {
		t.Run(file, func(t *testing.T) {
			found := 0
			for _, d := range codeTexts(readDoc(t, file)) {
				for _, inv := range invocations(d) {
					found++
					for _, problem := range checkInvocation(table, inv.args) {
						t.Errorf("%s:%d: %s\n\t%s", file, inv.line, problem, strings.TrimSpace(d.text))
					}
				}
			}
			if found == 0 && file == "README.md" {
				t.Errorf("%s: found no ownsona command line; the finder is broken", file)
			}
		})
	}
}

// TestDocs_invocations pins how command lines are found in code, so that TestDocs_Commands
// checks what a reader would run.
func TestDocs_invocations(t *testing.T) {
	tests := []struct {
		name, text string
		want       [][]string
	}{
		{"plain", "ownsona backup --to x.db", [][]string{{"backup", "--to", "x.db"}}},
		{"path and comment", "bin/ownsona check   # the database", [][]string{{"check"}}},
		{"sudo", "sudo ownsona install-service --dry-run", [][]string{{"install-service", "--dry-run"}}},
		{"variables", "OWNSONA_TLS=acme ./bin/ownsona serve --tls acme", [][]string{{"serve", "--tls", "acme"}}},
		{"command substitution", `P="$(bin/ownsona hash-password)" bin/ownsona serve`, [][]string{{"hash-password"}, {"serve"}}},
		{"after --", "claude mcp add ownsona -- /opt/ownsona stdio --db /x/ownsona.db", [][]string{{"stdio", "--db", "/x/ownsona.db"}}},
		{"sequence", "ownsona export > m.jsonl ; ownsona import m.jsonl", [][]string{{"export", ">", "m.jsonl"}, {"import", "m.jsonl"}}},
		{"systemd", "ExecStart=/usr/local/bin/ownsona serve --db /var/lib/ownsona/ownsona.db", [][]string{{"serve", "--db", "/var/lib/ownsona/ownsona.db"}}},
		{"not a command", "claude mcp add --transport http ownsona http://127.0.0.1:8080/mcp", nil},
		{"a file", "ownsona.db.sock", nil},
		{"a resource", "ownsona://memories/recent", nil},
		{"a JSON value", `"command": "/path/to/bin/ownsona",`, nil},
		{"a JSON key", `"ownsona": {`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got [][]string
			for _, inv := range invocations(docText{1, tt.text}) {
				got = append(got, inv.args)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("invocations(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// TestDocs_checkInvocation: a flag, command or subcommand that the binary does not have is
// reported; real ones are not.
func TestDocs_checkInvocation(t *testing.T) {
	table := cliTable(t)
	tests := []struct {
		name    string
		args    []string
		wantBad bool
	}{
		{"a setting of serve", []string{"serve", "--tls", "acme", "--trusted-proxies=127.0.0.1/32"}, false},
		{"a subcommand's flag", []string{"token", "create", "--name", "x", "--scope", "memories:read"}, false},
		{"help", []string{"backup", "--help"}, false},
		{"a placeholder", []string{"COMMAND", "--help"}, false},
		{"no such flag", []string{"backup", "--too", "x.db"}, true},
		{"another command's flag", []string{"stdio", "--public-url", "https://mem.example.com"}, true},
		{"no such command", []string{"serv"}, true},
		{"no such subcommand", []string{"clients", "remove", "ID"}, true},
		{"a subcommand's flag on its sibling", []string{"token", "list", "--name", "x"}, true},
		{"one dash", []string{"serve", "-db", "x.db"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := checkInvocation(table, tt.args)
			if (len(bad) > 0) != tt.wantBad {
				t.Errorf("checkInvocation(%q) = %q, want problems: %v", tt.args, bad, tt.wantBad)
			}
		})
	}
}

// docSetting is one row of the settings: its flag (empty for an environment-only one), its
// environment variable and its default as help prints it (empty for none).
type docSetting struct{ flag, env, def string }

var helpSetting = regexp.MustCompile(`^  (?:--([a-z0-9-]+), )?((?:OWNSONA|AWS)_[A-Z0-9_]+)(?: \(default (.*)\)| \(environment only\))?$`)

// TestDocs_SettingsTable: docs/configuration.md's settings table lists exactly the settings
// `ownsona help` prints, each with its flag, variable and default.
func TestDocs_SettingsTable(t *testing.T) {
	_, settingsPart, ok := strings.Cut(help(t, "help"), "Settings (flag, environment variable, default):\n")
	if !ok {
		t.Fatal("ownsona help prints no settings")
	}
	want := map[string]docSetting{}
	for _, line := range strings.Split(settingsPart, "\n") {
		if m := helpSetting.FindStringSubmatch(line); m != nil {
			want[m[2]] = docSetting{m[1], m[2], m[3]}
		}
	}
	if len(want) < 10 {
		t.Fatalf("read %d settings from ownsona help; the format changed?", len(want))
	}

	got := map[string]docSetting{}
	rows := 0
	header := "| flag | environment | default | meaning |"
	page := readDoc(t, "docs/configuration.md")
	_, table, ok := strings.Cut(page, header+"\n")
	if !ok {
		t.Fatalf("docs/configuration.md has no table headed %q", header)
	}
	cell := func(s string) string {
		s = strings.Trim(strings.TrimSpace(s), "`")
		if s == "—" || s == "(environment only)" {
			return ""
		}
		return s
	}
	for _, line := range strings.Split(table, "\n")[1:] { // past the |---| line
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 4 {
			t.Errorf("docs/configuration.md: a settings row with %d cells: %s", len(cells), line)
			continue
		}
		s := docSetting{strings.TrimPrefix(cell(cells[0]), "--"), cell(cells[1]), cell(cells[2])}
		rows++
		if _, dup := got[s.env]; dup {
			t.Errorf("docs/configuration.md lists %s twice", s.env)
		}
		got[s.env] = s
	}
	for env, w := range want {
		g, ok := got[env]
		switch {
		case !ok:
			t.Errorf("docs/configuration.md leaves out %s (help: flag %q, default %q)", env, w.flag, w.def)
		case g != w:
			t.Errorf("docs/configuration.md: %s is flag %q, default %q; help says flag %q, default %q", env, g.flag, g.def, w.flag, w.def)
		}
	}
	for env := range got {
		if _, ok := want[env]; !ok {
			t.Errorf("docs/configuration.md lists %s, which ownsona help does not print", env)
		}
	}
}

var (
	mdLink  = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// anchors are a page's heading anchors as GitHub makes them: lower case, letters, digits, -
// and _ kept, spaces to -, everything else dropped; a repeated one gets -1, -2, ….
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inBlock := false
	for _, line := range strings.Split(page, "\n") {
		if fence.MatchString(line) {
			inBlock = !inBlock
		}
		m := heading.FindStringSubmatch(line)
		if inBlock || m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestDocs_Links: every relative link in README.md and docs/*.md names a file of the
// repository, every #anchor a heading of its page, and README links every docs page.
func TestDocs_Links(t *testing.T) {
	files := docFiles(t)
	pages := map[string]string{}
	for _, f := range files {
		pages[f] = readDoc(t, f)
	}
	readme := map[string]bool{}
	for _, file := range files {
		var prose strings.Builder
		inBlock := false
		for _, line := range strings.Split(pages[file], "\n") {
			if fence.MatchString(line) {
				inBlock = !inBlock
			}
			if !inBlock {
				prose.WriteString(inlineCode.ReplaceAllString(line, "") + "\n")
			}
		}
		for _, m := range mdLink.FindAllStringSubmatch(prose.String(), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			name, anchor, _ := strings.Cut(target, "#")
			resolved := file
			if name != "" {
				resolved = path.Clean(path.Join(path.Dir(file), name))
				if _, err := os.Stat(filepath.Join("..", filepath.FromSlash(resolved))); err != nil {
					t.Errorf("%s: link %q: no such file %s", file, target, resolved)
					continue
				}
			}
			if file == "README.md" {
				readme[resolved] = true
			}
			if anchor == "" {
				continue
			}
			page, ok := pages[resolved]
			if !ok {
				if !strings.HasSuffix(resolved, ".md") {
					continue // a line of a source file (#L12) is not checked
				}
				page = readDoc(t, resolved)
			}
			if !anchors(page)[anchor] {
				t.Errorf("%s: link %q: %s has no heading #%s", file, target, resolved, anchor)
			}
		}
	}
	for _, f := range files[1:] {
		if !readme[f] {
			t.Errorf("README.md does not link %s", f)
		}
	}
}
