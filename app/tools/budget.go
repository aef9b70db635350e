package tools

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ownsona/ownsona/mcp"
)

// Answers fit the hosts (issue 27, item 4). Claude Code saves a tool result of more than
// 50,000 characters to a file and shows the model a 2 KB preview instead (a threshold that
// MAX_MCP_OUTPUT_TOKENS, 25,000 tokens by default, does not move), and with structuredContent
// present it gives the model JSON.stringify(structuredContent), not content[0].text; Claude.ai
// caps a result near 150,000 characters. So no answer of a tool, resource or prompt is longer
// than a budget (Config.MaxResultChars), counted in characters as JavaScript counts them
// (UTF-16 code units) over what the model reads: the payload's compact JSON, the text of
// content[0] when a tool chooses its own (recall's format "text"), a resource's text, a
// prompt's text.
//
// A payload that can grow has one list (memories, matches, groups, tags, results) and says how
// to cut it (trimmable). One mechanism, fit, keeps as many whole items as the budget holds and
// the payload says so itself: "truncated": true, "omitted": how many items were left out, and
// a note on how to get them; where the tool pages, its next cursor continues exactly after the
// last item returned. When not even the first item fits alone (a memory longer than the
// budget), that item comes with its memory texts cut to what fits, ending in "…", their ids in
// "text_cut" and the note saying so. The JSON is always whole, and structuredContent and
// content[0].text stay the same payload.

// Bounds of the answer budget, in characters.
const (
	// DefaultMaxResultChars is 80% of Claude Code's 50,000-character threshold. Measured
	// with Anthropic's tokenizer (@anthropic-ai/tokenizer) on list_memories payloads of 20 to
	// 200 LoCoMo memories, our JSON runs 2.9 to 3.0 characters a token, so 40,000 characters
	// are about 13,500 tokens: under MAX_MCP_OUTPUT_TOKENS's 25,000 even for a tokenizer
	// that counts 1.8 times as many, and far under Claude.ai's cap.
	DefaultMaxResultChars = 40_000
	// MinMaxResultChars is the smallest budget worth setting: a memory's fields, the note
	// and a few hundred characters of text.
	MinMaxResultChars = 2_000
	// MaxMaxResultChars is the largest: Claude Code's ceiling for a tool that declares its
	// own limit (_meta "anthropic/maxResultSizeChars").
	MaxMaxResultChars = 500_000
)

// trimmable is a payload with one list that fit may cut at a whole item.
type trimmable interface {
	// listLen is how many items the list holds.
	listLen() int
	// trimmed returns the payload with only its first n items (n < listLen, or n == listLen
	// with textMax set), saying in the payload what was left out and how to get it. With
	// textMax >= 0 (n is then 1), the texts of the memories in that one item are cut to
	// textMax characters. It never changes the receiver.
	trimmed(n, textMax int) any
}

// fit returns p when size(p) is within limit, and otherwise p cut to the most whole items
// that fit; when not even one does, the first item with its memory texts cut to fit; when
// not even that does, no item at all.
func fit(p trimmable, limit int, size func(any) int) any {
	if size(p) <= limit {
		return p
	}
	n := p.listLen()
	// over is monotonic in k: more items, a longer answer. The first k that is over, less
	// one, is the most that fit; n is over (p itself was).
	first := sort.Search(n, func(k int) bool { return size(p.trimmed(k, -1)) > limit })
	switch keep := first - 1; {
	case keep >= 1:
		return p.trimmed(keep, -1)
	case keep < 0: // not even an empty list fits
		return p.trimmed(0, -1)
	}
	// No whole item fits: the first one, its texts cut to the longest that fits.
	t := sort.Search(limit+1, func(t int) bool { return size(p.trimmed(1, t)) > limit })
	if t == 0 {
		return p.trimmed(0, -1)
	}
	return p.trimmed(1, t-1)
}

// jsLen is the length of UTF-8 text b in UTF-16 code units: what JavaScript's length says,
// and so what Claude's hosts count.
func jsLen[T ~string | ~[]byte](b T) int {
	n := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c&0xC0 == 0x80: // a continuation byte
		case c >= 0xF0: // a rune past the Basic Multilingual Plane: a surrogate pair
			n += 2
		default:
			n++
		}
	}
	return n
}

// jsCounter counts what is written to it with jsLen, keeping none of it.
type jsCounter struct{ n int }

func (c *jsCounter) Write(b []byte) (int, error) {
	c.n += jsLen(b)
	return len(b), nil
}

// jsonSize is the jsLen of v's JSON as mcp sends it (compact, without HTML escapes), counted
// as it is encoded rather than kept: mcp encodes it once more, but no copy of the answer is
// left as garbage.
func jsonSize(v any) (int, error) {
	var c jsCounter
	enc := json.NewEncoder(&c)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return c.n - 1, err // less Encode's newline
}

// payloadSize is the length of what the model reads of a tool's payload: its JSON, or its own
// text (texter) when that is longer.
func payloadSize(p any) int {
	n, err := jsonSize(p)
	if err != nil {
		return 0 // mcp reports the payload that does not marshal
	}
	return max(n, jsLen(textOf(p)))
}

// indentedSize is the length of a resource's text (jsonText).
func indentedSize(v any) int {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return 0
	}
	return jsLen(b)
}

// result is a tool's answer of payload p within the budget: its structured content and, when
// the payload chooses one (texter), the text of content[0].
func (s *Server) result(p any) *mcp.ToolResult {
	if t, ok := p.(trimmable); ok {
		p = fit(t, s.maxResult, payloadSize)
	}
	res := &mcp.ToolResult{Structured: p}
	if text := textOf(p); text != "" {
		res.Content = []mcp.Content{mcp.TextContent(text)}
	}
	return res
}

// textOf is the text a payload chooses for content[0]; "" for its JSON.
func textOf(p any) string {
	if t, ok := p.(texter); ok {
		return t.contentText()
	}
	return ""
}

// cutNote is what a payload cut to the budget says of itself; all empty when it was not cut.
type cutNote struct {
	Truncated bool `json:"truncated,omitempty" desc:"true when the answer was cut to fit the server's answer budget (see note)"`
	// Omitted is how many items of the list were left out.
	Omitted int `json:"omitted,omitempty" desc:"how many items were left out to fit the answer budget"`
	// TextCut names the memories whose text is cut short.
	TextCut []uint64 `json:"text_cut,omitempty" desc:"memories whose text is cut short to fit the answer budget" schema:"id"`
	// Note says what was left out and how to get it.
	Note string `json:"note,omitempty" desc:"what was left out to fit the answer budget, and how to get it"`
}

// newCut is the note of a list cut to n of total items: omitted says what the left-out items
// are ("5 more memories of this page"), rest how to get them; cut are the memories whose text
// was cut to textMax characters.
func newCut(total, n int, omitted, rest string, cut []uint64, textMax int) cutNote {
	c := cutNote{Truncated: true, Omitted: total - n, TextCut: cut}
	var note []string
	if c.Omitted > 0 {
		note = append(note, fmt.Sprintf("%s were left out to fit the answer budget; %s.", fmt.Sprintf(omitted, c.Omitted), rest))
	}
	if len(cut) > 0 {
		note = append(note, fmt.Sprintf("The text of memory %s is cut to its first %d characters to fit the answer budget; "+
			"the owner sees it whole in ownsona's console or with `ownsona export`.", idList(cut), textMax))
	}
	c.Note = strings.Join(note, " ")
	return c
}

// idList names ids: "12", "12, 13 and 14".
func idList(ids []uint64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// cutText returns text cut to at most max characters, with an ellipsis, and whether it was
// longer; max < 0 leaves it whole.
func cutText(text string, max int) (string, bool) {
	if max < 0 || utf8.RuneCountInString(text) <= max {
		return text, false
	}
	return string([]rune(text)[:max]) + "…", true
}

// cutMemory is m with its text cut to max characters, and whether it was cut.
func cutMemory(m memoryOut, max int) (memoryOut, bool) {
	var cut bool
	m.Text, cut = cutText(m.Text, max)
	return m, cut
}

// firstMemories is the first n of mems, the texts of the first cut to textMax characters
// (textMax >= 0), and the ids of those cut.
func firstMemories(mems []memoryOut, n, textMax int) ([]memoryOut, []uint64) {
	out := append([]memoryOut{}, mems[:n]...)
	var cut []uint64
	if textMax >= 0 && n > 0 {
		var was bool
		if out[0], was = cutMemory(out[0], textMax); was {
			cut = append(cut, out[0].ID)
		}
	}
	return out, cut
}

// firstOf is the first n of items, a copy.
func firstOf[T any](items []T, n int) []T { return append([]T{}, items[:n]...) }
