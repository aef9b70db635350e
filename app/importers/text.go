package importers

// Markdown and plain text: a memory per paragraph or list item.

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/ownsona/ownsona/app/memory"
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
//
// An item is held only up to what a memory may be (textUnitLimit): past it, the rest of it
// is skipped as it is read, and the item is reported as too long.
func (im *importer) readText(r *bufio.Reader) error {
	lr := &lineReader{r: r, max: textUnitLimit(im.maxText)}
	var headings [6]string
	var para []string
	start, n := 0, 0
	size, long := 0, false // the bytes of para; whether the item outgrew the limit
	fence := ""            // the fence of the code block we are in
	frontMatter := false
	flush := func() error {
		if long {
			para, size, long = nil, 0, false
			what := "paragraph"
			if fence != "" {
				what = "code block"
			}
			return im.bad(memory.ImportPos{Line: start}, fmt.Errorf("the %s is longer than %s, more than a memory may hold (%d characters); split it",
				what, memory.ByteSize(int64(lr.max)), im.maxText))
		}
		if len(para) == 0 {
			return nil
		}
		sep := " "
		if fence != "" {
			sep = "\n"
		}
		text := strings.TrimSpace(strings.Join(para, sep))
		para, size = nil, 0
		if text == "" {
			return nil
		}
		rec := &memory.ImportRecord{Memory: memory.Memory{Text: text, Tags: looseTags(headings[:]...), SourceProvider: FormatMarkdown}, TextOnly: true}
		return im.add(memory.ImportPos{Line: start}, []*memory.ImportRecord{rec}, nil)
	}
	add := func(line string) {
		if len(para) == 0 && !long {
			start = n
		}
		if size += len(line) + 1; size > lr.max {
			para, long = nil, true
		}
		if !long {
			para = append(para, line)
		}
	}
	for {
		raw, longLine, rerr := lr.next()
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("line %d: %w", n+1, rerr)
		}
		n++
		if err := im.tick(); err != nil {
			return err
		}
		line := string(raw)
		if longLine && frontMatter {
			continue
		}
		if longLine {
			// Too long for any memory: whatever it is, the item it starts or continues is.
			if trimmed := strings.TrimSpace(line); fence == "" && isListItem(trimmed) {
				if err := flush(); err != nil {
					return err
				}
			}
			if len(para) == 0 && !long {
				start = n
			}
			para, long = nil, true
			continue
		}
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
		case isRule(trimmed) && len(para) == 1 && !long && !strings.HasPrefix(trimmed, "*") && !isListItem(para[0]):
			// A setext heading: the paragraph line above "===" or "---".
			level := 2
			if trimmed[0] == '=' {
				level = 1
			}
			setHeading(&headings, level, para[0])
			para, size = nil, 0
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
	return flush()
}

// textUnitLimit is the most bytes a paragraph, list item or code block of Markdown may take,
// for a store whose text limit is maxText characters: 4 bytes for each character, and 4 KiB
// for the spaces a text loses when it is normalized.
func textUnitLimit(maxText int) int { return 4*maxText + 4<<10 }

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
