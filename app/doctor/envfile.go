package doctor

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// ReadEnvFile reads a systemd EnvironmentFile (KEY=VALUE lines; "#" and ";" comments; values
// unquoted with backslash escapes, 'single-quoted' as is, or "double-quoted" with \" \\ \` \$
// escapes; no variable expansion), so that doctor sees what the service sees. Lines without
// "=" are ignored, as systemd does.
func ReadEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		env[strings.TrimSpace(key)] = unquoteEnv(strings.TrimLeft(val, " \t"))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return env, nil
}

// unquoteEnv reads one EnvironmentFile value as systemd does (src/basic/env-file.c).
func unquoteEnv(s string) string {
	var b strings.Builder
	trail := -1 // where unquoted trailing whitespace begins
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				end = len(s) - i - 1
			}
			b.WriteString(s[i+1 : i+1+end])
			i += end + 1
			trail = -1
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					if strings.IndexByte("\"\\`$", s[i+1]) < 0 {
						b.WriteByte('\\')
					}
					i++
				}
				b.WriteByte(s[i])
			}
			trail = -1
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
			trail = -1
		case ' ', '\t':
			if trail < 0 {
				trail = b.Len()
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
			trail = -1
		}
	}
	out := b.String()
	if trail >= 0 {
		out = out[:trail]
	}
	return out
}
