package memory

// Markdown and plain text: a memory per paragraph or list item.

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// readText reads Markdown or plain text. Each paragraph (lines up to a blank line) is one
// memory, and so is each list item ("- ", "* ", "+ ", "1. ", with its continuation lines; a
// task box "[ ]" or "[x]" is kept in the text); a fenced code block is one memory too. The
// headings above an item become its tags (normalized: "## Work projects" is work-projects;
// a heading that cannot be a tag is left out), not part of its text: a memory stays the
// author's words. Front matter between "---" lines at the top, horizontal rules and HTML
// comments on a line of their own are skipped; "> " quote markers are removed. An item's
// position is the line it starts on. Text has no times: an item is new unless the same
// text is stored already.
func (im *importer) readText(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var headings [6]string
	var para []string
	start, n := 0, 0
	fence := "" // the fence of the code block we are in
	frontMatter := false
	flush := func() error {
		if len(para) == 0 {
			return nil
		}
		sep := " "
		if fence != "" {
			sep = "\n"
		}
		text := strings.TrimSpace(strings.Join(para, sep))
		para = nil
		if text == "" {
			return nil
		}
		rec := &importRecord{Memory: Memory{Text: text, Tags: looseTags(headings[:]...), SourceProvider: FormatMarkdown}, textOnly: true}
		return im.add(itemPos{line: start}, []*importRecord{rec}, nil)
	}
	add := func(line string) {
		if len(para) == 0 {
			start = n
		}
		para = append(para, line)
	}
	for sc.Scan() {
		n++
		line := sc.Text()
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
			if strings.TrimSpace(line) == "---" {
				frontMatter = true
				continue
			}
		}
		trimmed := strings.TrimSpace(line)
		if frontMatter {
			if trimmed == "---" || trimmed == "..." {
				frontMatter = false
			}
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				err := flush()
				fence = ""
				if err != nil {
					return err
				}
				continue
			}
			add(line)
			continue
		}
		var err error
		switch {
		case trimmed == "":
			err = flush()
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			if err = flush(); err == nil {
				fence = trimmed[:3]
			}
		case isRule(trimmed) && len(para) == 1 && !strings.HasPrefix(trimmed, "*") && !isListItem(para[0]):
			// A setext heading: the paragraph line above "===" or "---".
			level := 2
			if trimmed[0] == '=' {
				level = 1
			}
			setHeading(&headings, level, para[0])
			para = nil
		case isRule(trimmed):
			err = flush()
		case strings.HasPrefix(trimmed, "#"):
			level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
			rest := trimmed[level:]
			if level > 6 || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
				add(trimmed) // "#hashtag" is text
				break
			}
			if err = flush(); err == nil {
				setHeading(&headings, level, strings.TrimRight(strings.TrimSpace(rest), "# "))
			}
		case strings.HasPrefix(trimmed, "<!--") && strings.HasSuffix(trimmed, "-->"):
		case isListItem(trimmed):
			if err = flush(); err == nil {
				add(listText(trimmed))
			}
		default:
			add(strings.TrimSpace(strings.TrimLeft(trimmed, "> ")))
		}
		if err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", n+1, err)
	}
	return flush()
}

// setHeading makes text the heading of level (1–6) and forgets the deeper ones.
func setHeading(h *[6]string, level int, text string) {
	h[level-1] = strings.TrimSpace(text)
	for i := level; i < len(h); i++ {
		h[i] = ""
	}
}

// isRule reports a line of three or more '-', '*', '_' or '=' (spaces allowed).
func isRule(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if len(s) < 3 {
		return false
	}
	return strings.Trim(s, string(s[0])) == "" && strings.ContainsRune("-*_=", rune(s[0]))
}

// isListItem reports a list item: "- ", "* ", "+ ", or a number and "." or ")" and a space.
func isListItem(s string) bool {
	if len(s) >= 2 && strings.ContainsRune("-*+", rune(s[0])) && (s[1] == ' ' || s[1] == '\t') {
		return true
	}
	i := 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(s) && (s[i] == '.' || s[i] == ')') && (s[i+1] == ' ' || s[i+1] == '\t')
}

// listText is a list item without its marker.
func listText(s string) string {
	if strings.ContainsRune("-*+", rune(s[0])) {
		return strings.TrimSpace(s[1:])
	}
	i := strings.IndexAny(s, ".)")
	return strings.TrimSpace(s[i+1:])
}
