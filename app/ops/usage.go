package ops

// How help reads: within 100 columns, and one flag style (--name) everywhere, whether a
// command's flags or the settings table print it.

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// HelpWidth is the widest line help prints, in columns.
const HelpWidth = 100

// Wrap fills text into lines of at most width columns, each indented by indent spaces, breaking
// at spaces; a word longer than a line stands on its own. Explicit line breaks in text are kept.
func Wrap(text string, indent, width int) string {
	var b strings.Builder
	pad := strings.Repeat(" ", indent)
	for para := range strings.SplitSeq(text, "\n") {
		line := pad
		for _, word := range strings.Fields(para) {
			if len(line) > indent && len(line)+1+len(word) > width {
				b.WriteString(line + "\n")
				line = pad
			}
			if len(line) > indent {
				line += " "
			}
			line += word
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// Hang fills text like Wrap, with the first line unindented and the others indented by indent:
// a usage line too long for one line.
func Hang(text string, indent, width int) string {
	return strings.TrimPrefix(Wrap(strings.Repeat(" ", indent)+text, indent, width), strings.Repeat(" ", indent))
}

// PrintFlags prints fs's flags as --name VALUE, each with its usage (and default, when it has
// one) wrapped below it: the --help of every command.
func PrintFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		value, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if value != "" {
			line += " " + value
		}
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "0s" && def != "[]" && !strings.Contains(usage, "(default ") {
			usage += " (default " + def + ")"
		}
		fmt.Fprint(w, line+"\n"+Wrap(usage, 6, HelpWidth))
	})
}
