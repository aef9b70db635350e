// Package corpus is the text of the stores that the benchmarks measure (cmd/perfgoals,
// app's benchmarks): the LoCoMo dev turns repeated to any size with the speakers' names varied,
// read at run time from the evaluation data and never stored, or synthetic sentences without it.
package corpus

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Texts returns n texts: LoCoMo's turns with the speakers renamed on each repetition, or
// synthetic sentences when dir has no memories.jsonl.
func Texts(dir string, n int) ([]string, string, error) {
	f, err := os.Open(filepath.Join(dir, "memories.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return synthetic(n), "synthetic sentences", nil
	}
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	var turns []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, "", fmt.Errorf("%s: %w", f.Name(), err)
		}
		turns = append(turns, m.Text)
	}
	if err := sc.Err(); err != nil {
		return nil, "", err
	}
	if len(turns) == 0 {
		return nil, "", fmt.Errorf("%s holds no memories", f.Name())
	}
	speakers := map[string]bool{}
	for _, t := range turns {
		if s, _, ok := strings.Cut(t, ": "); ok && len(s) < 30 {
			speakers[s] = true
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for s := range speakers {
			if !yield(s) {
				return
			}
		}
	})
	out := make([]string, 0, n)
	for rep := 0; len(out) < n; rep++ {
		r := strings.NewReplacer(renames(names, rep)...)
		for _, t := range turns {
			if len(out) == n {
				break
			}
			out = append(out, r.Replace(t))
		}
	}
	return out, fmt.Sprintf("LoCoMo dev turns ×%d, names varied", (n+len(turns)-1)/len(turns)), nil
}

var firstNames = []string{"Ava", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kira", "Luca",
	"Maya", "Nils", "Olga", "Pavel", "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wes", "Ximena", "Yara", "Zeno"}

// renames maps every speaker name to one of repetition rep's (none for rep 0).
func renames(names []string, rep int) []string {
	if rep == 0 {
		return nil
	}
	var pairs []string
	for i, s := range names {
		a := firstNames[(rep*7+i)%len(firstNames)]
		b := firstNames[(rep*3+i*5)%len(firstNames)]
		pairs = append(pairs, s, a+b[:2]+strconv.Itoa(rep))
	}
	return pairs
}

var words = strings.Fields(`coffee tea garden sister brother mother father son daughter birthday meeting project
deadline allergy doctor dentist holiday flight hotel car bike running marathon piano guitar book novel movie series
recipe pasta sushi vegetarian peanuts dog cat school teacher office manager salary mortgage rent apartment house
kitchen paint blue green winter summer ski beach lisbon berlin tokyo prefers likes hates works lives visits plans
bought sold learning spanish german python`)

func synthetic(n int) []string {
	r := rand.New(rand.NewPCG(7, uint64(n)))
	out := make([]string, n)
	for i := range out {
		w := make([]string, 6+r.IntN(10))
		for j := range w {
			w[j] = words[r.IntN(len(words))]
		}
		out[i] = fmt.Sprintf("%d %s", i, strings.Join(w, " "))
	}
	return out
}

// Questions returns the questions of dir's queries.jsonl (LoCoMo's), nil when there is none.
func Questions(dir string) ([]string, error) {
	f, err := os.Open(filepath.Join(dir, "queries.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var q struct{ Question string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name(), err)
		}
		out = append(out, q.Question)
	}
	return out, sc.Err()
}
