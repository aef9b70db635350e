// Command benchtable turns `go test -bench` output on stdin into the table that `make bench`
// prints: one row per benchmark, one column per reported metric.
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

func main() {
	type row struct {
		name    string
		metrics map[string]string
	}
	var rows []row
	var units []string
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		r := row{name: strings.TrimPrefix(m[1], "Benchmark"), metrics: map[string]string{}}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			if f[i+1] == "ns/op" || f[i+1] == "B/op" || f[i+1] == "allocs/op" {
				continue
			}
			r.metrics[f[i+1]] = f[i]
			if !slices.Contains(units, f[i+1]) {
				units = append(units, f[i+1])
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: no benchmark lines on stdin")
		os.Exit(1)
	}
	fmt.Printf("\n| benchmark | %s |\n|---|%s\n", strings.Join(units, " | "), strings.Repeat("---|", len(units)))
	for _, r := range rows {
		cells := make([]string, len(units))
		for i, u := range units {
			if v, ok := r.metrics[u]; ok {
				cells[i] = v
			} else {
				cells[i] = "-"
			}
		}
		fmt.Printf("| %s | %s |\n", r.name, strings.Join(cells, " | "))
	}
}
