package vector

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestBuiltin_SoftMatch(t *testing.T) {
	b := NewBuiltin()
	t.Run("identical words score 1", func(t *testing.T) {
		got := b.SoftMatch("Where did Colby buy the coffee?", []string{
			"Colby bought coffee there.",          // "bought" is not "buy", but close
			"The coffee Colby did buy was cheap.", // every content word
			"buy coffee, colby",                   // order and case do not matter
		}, nil)
		if !near(got[1], 1) || !near(got[2], 1) {
			t.Errorf("SoftMatch = %v, want 1 for the texts holding every query word", got)
		}
		if got[0] >= 1 || got[0] < 0.7 {
			t.Errorf("SoftMatch = %v, want a high score below 1 for an inflected verb", got[0])
		}
	})
	t.Run("unrelated text scores about 0", func(t *testing.T) {
		got := b.SoftMatch("espresso machine", []string{"The senator vetoed the tax bill.", "", "the of and"}, nil)
		if got[0] > 0.1 {
			t.Errorf("unrelated text: %v, want about 0", got[0])
		}
		if got[1] != 0 || got[2] != 0 {
			t.Errorf("texts without content words: %v, want 0", got[1:])
		}
	})
	t.Run("synonyms score high", func(t *testing.T) {
		got := b.SoftMatch("coffee", []string{"espresso", "tea", "tractor"}, nil)
		if got[0] < 0.25 || got[0] <= got[2] { // a cosine of 0.66, cubed
			t.Errorf("coffee vs espresso %v, vs tractor %v: want espresso high and above tractor", got[0], got[2])
		}
		if got[2] > 0.05 {
			t.Errorf("coffee vs tractor %v, want about 0", got[2])
		}
	})
	t.Run("order of texts preserved", func(t *testing.T) {
		texts := []string{"I adopted a puppy", "we painted the kitchen", "my dog chews shoes", "sunset at the beach"}
		got := b.SoftMatch("dog", texts, nil)
		for i, s := range got {
			if one := b.SoftMatch("dog", texts[i:i+1], nil); one[0] != s {
				t.Errorf("text %d: %v in the batch, %v alone", i, s, one[0])
			}
		}
		if got[2] != 1 || got[0] <= got[1] || got[0] <= got[3] {
			t.Errorf("SoftMatch(dog, nil) = %v: want the dog text 1 and the puppy above the others", got)
		}
	})
	t.Run("empty inputs", func(t *testing.T) {
		if got := b.SoftMatch("coffee", nil, nil); len(got) != 0 {
			t.Errorf("no texts: %v", got)
		}
		for _, q := range []string{"", "what is it?", "!!"} {
			if got := b.SoftMatch(q, []string{"coffee", ""}, nil); !slices.Equal(got, []float32{0, 0}) {
				t.Errorf("query %q without content words: %v, want zeros", q, got)
			}
		}
	})
	t.Run("repeated query words weigh more", func(t *testing.T) {
		once := b.SoftMatch("coffee tractor", []string{"coffee"}, nil)[0]
		twice := b.SoftMatch("coffee coffee tractor", []string{"coffee"}, nil)[0]
		if !(twice > once) || once <= 0 || once >= 1 {
			t.Errorf("coffee tractor %v, coffee coffee tractor %v", once, twice)
		}
	})
	t.Run("names keep their weight", func(t *testing.T) {
		got := b.SoftMatch("What did Melanie paint?", []string{"Melanie: I love it", "Caroline: I paint"}, nil)
		if got[0] < 0.3 || got[1] < 0.3 {
			t.Errorf("SoftMatch = %v: the name and the verb should both count", got)
		}
	})
	t.Run("a name the store is full of weighs little", func(t *testing.T) {
		counts, err := NewWordCounts()
		if err != nil {
			t.Fatal(err)
		}
		for range 5000 {
			counts.Add("Melanie: so how are things going")
		}
		texts := []string{"Melanie: I love it", "Caroline: I paint"}
		got := b.SoftMatch("What did Melanie paint?", texts, counts)
		if got[0] > 0.1 || got[1] < 0.9 {
			t.Errorf("SoftMatch = %v: in a store where every memory says Melanie, the verb should decide", got)
		}
		empty, err := NewWordCounts()
		if err != nil {
			t.Fatal(err)
		}
		if prior, got := b.SoftMatch("What did Melanie paint?", texts, nil), b.SoftMatch("What did Melanie paint?", texts, empty); !slices.Equal(got, prior) {
			t.Errorf("empty counts: %v, want the prior's %v", got, prior)
		}
	})
	t.Run("time words match only themselves", func(t *testing.T) {
		got := b.SoftMatch("where were you these days?", []string{"we met last spring", "those days were fun", "on Sundays"}, nil)
		if !slices.Equal(got, []float32{0, 1, 0}) {
			t.Errorf("SoftMatch = %v, want [0 1 0]", got)
		}
	})
}

// softMatchRef is SoftMatch's formula computed plainly: every token of the whole text, every
// occurrence of a query word, cosines in float64, weights from counts (nil: the Zipf prior)
// recomputed from the texts they count.
func softMatchRef(tb testing.TB, query, text string, counted []string) float64 {
	tb.Helper()
	st, err := loadSoft()
	if err != nil {
		tb.Fatal(err)
	}
	type word struct {
		row  int32
		time bool
	}
	content := func(s string) []word {
		var ws []word
		for _, w := range Tokenize(s) {
			if _, ok := contractions[w]; ok || stopwords[w] {
				continue
			}
			if r, ok := st.g.row(w); ok {
				ws = append(ws, word{r, timeWords[w]})
			}
		}
		return ws
	}
	count := map[int32]float64{}
	total := 0.0
	for _, c := range counted {
		for _, w := range Tokenize(c) {
			ws := []string{w}
			if c, ok := contractions[w]; ok {
				ws = c[:]
			}
			for _, w := range ws {
				if r, ok := st.g.row(w); ok {
					count[r]++
					total++
				}
			}
		}
	}
	weight := func(r int32) float64 {
		p := 1 / (float64(r+1) * zipfH)
		if counted != nil {
			p = (count[r] + storePrior*p) / (total + storePrior)
		}
		return st.a / (st.a + p)
	}
	cos := func(a, b int32) float64 {
		var dot, na, nb float64
		for j := range builtinDim {
			x, y := float64(st.g.q[int(a)*builtinDim+j]), float64(st.g.q[int(b)*builtinDim+j])
			dot, na, nb = dot+x*y, na+x*x, nb+y*y
		}
		return dot / math.Sqrt(na*nb)
	}
	var num, den float64
	doc := content(text)
	for _, w := range content(query) {
		best := 0.0
		for _, u := range doc {
			switch {
			case u.row == w.row:
				best = 1
			case !w.time:
				best = max(best, (cos(w.row, u.row)-softFloor)/(1-softFloor))
			}
		}
		wt := weight(w.row)
		num += wt * best
		den += wt
	}
	if den == 0 {
		return 0
	}
	return num / den
}

func TestBuiltin_SoftMatch_formula(t *testing.T) {
	queries := []string{
		"What did Melanie paint after her trip to the beach?",
		"Where does Colby's sister live, and when did she move?",
		"coffee coffee espresso",
		"Which café did they visit in São Paulo?",
		"What did Melanie do last weekend, these days, on Sunday?",
	}
	texts := []string{
		"Melanie: I painted a sunset after we got back from the beach!",
		"Caroline: My sister moved to Boston last May; she loves it there.",
		"Colby's mom doesn't drink coffee... she's a tea person (green tea).",
		"We had espresso at a tiny café — best in São Paulo, honestly.",
		"", "   ", "the and of", "kids/puppies/horses; painting—hiking", "I'm sure they'll go.",
		"Melanie: the weekend was long, some days were slow; Sundays are for painting",
		"Melanie: I painted a sunset after we got back from the beach!", // repeated
	}
	b := NewBuiltin()
	counts, err := NewWordCounts()
	if err != nil {
		t.Fatal(err)
	}
	var counted []string
	for i, text := range append(texts, "Melanie: hi", "Melanie: coffee?", "Melanie: see you at the beach") {
		if i%2 == 0 { // some texts twice, some not at all
			counts.Add(text)
			counts.Add(text)
			counted = append(counted, text, text)
		}
	}
	for _, c := range []struct {
		name    string
		counts  *WordCounts
		counted []string
	}{{"Zipf prior", nil, nil}, {"store counts", counts, counted}} {
		t.Run(c.name, func(t *testing.T) {
			for _, q := range queries {
				got := b.SoftMatch(q, texts, c.counts)
				for i, text := range texts {
					if want := softMatchRef(t, q, text, c.counted); math.Abs(float64(got[i])-want) > 1e-5 {
						t.Errorf("SoftMatch(%q, %q) = %v, want %v", q, text, got[i], want)
					}
				}
			}
		})
	}
}

func TestBuiltin_SoftMatch_concurrent(t *testing.T) {
	b := NewBuiltin()
	texts := []string{"we drank espresso in Rome", "the cat sleeps", "Colby's new car"}
	want := b.SoftMatch("coffee in Italy", texts, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if got := b.SoftMatch("coffee in Italy", texts, nil); !slices.Equal(got, want) {
					t.Errorf("concurrent SoftMatch = %v, want %v", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestFuseN(t *testing.T) {
	lex := []Scored{{1, 9}, {2, 5}, {5, 1}}
	dense := []Scored{{2, 0.9}, {3, 0.5}, {4, 0.1}}
	soft := []Scored{{4, 0.8}, {1, 0.4}, {2, 0}}
	t.Run("equals Fuse for two lists", func(t *testing.T) {
		for _, tc := range []struct {
			lex, dense []Scored
			wl, wd     float32
			k          int
		}{
			{lex, dense, 0.6, 0.4, 10}, {lex, dense, 0.5, 0.5, 2}, {lex, nil, 1, 0, 10}, {nil, dense, 0, 1, 10},
			{[]Scored{{1, 3}, {2, 3}}, nil, 1, 1, 10}, {lex, dense, 0.5, 0.5, 0}, {nil, nil, 0.5, 0.5, 10},
		} {
			want := Fuse(tc.lex, tc.dense, tc.wl, tc.wd, tc.k)
			got := FuseN([][]Scored{tc.lex, tc.dense}, []float32{tc.wl, tc.wd}, tc.k)
			if !slices.Equal(got, want) {
				t.Errorf("FuseN = %v, Fuse = %v", got, want)
			}
		}
	})
	t.Run("three lists", func(t *testing.T) {
		got := FuseN([][]Scored{lex, dense, soft}, []float32{0.5, 0.25, 0.5}, 10)
		// lex 1, 0.5, 0; dense 1, 0.5, 0; soft 1, 0.5, 0
		want := []Scored{{2, 0.5}, {4, 0.5}, {1, 0.75}, {3, 0.125}, {5, 0}}
		slices.SortFunc(want, compareBest)
		if !slices.EqualFunc(got, want, func(a, b Scored) bool { return a.ID == b.ID && near(a.Score, b.Score) }) {
			t.Errorf("FuseN = %v, want %v", got, want)
		}
	})
	t.Run("weights and lists must match", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("FuseN with 2 lists and 1 weight did not panic")
			}
		}()
		FuseN([][]Scored{lex, dense}, []float32{1}, 10)
	})
	if got := FuseN(nil, nil, 10); got != nil {
		t.Errorf("FuseN(no lists) = %v", got)
	}
}

// softBenchTexts returns n texts of about words words each, drawn from everyday English.
func softBenchTexts(n, words int) []string {
	vocab := strings.Fields(`I we you she he my our the a to and of in on at with for from about
		went saw made took bought found painted cooked visited adopted started finished loved
		enjoyed watched played read wrote called met walked drove flew ran swam hiked baked
		coffee tea dinner lunch breakfast pizza cake cookies garden kitchen park beach lake
		mountain city museum concert festival school office job project book movie song guitar
		piano painting photo camera dog cat puppy horse bird car bike train plane trip vacation
		weekend morning evening yesterday today tomorrow week month year friend sister brother
		mom dad kids family team group class yesterday really very so just new old big small
		beautiful happy tired excited nervous proud great amazing Caroline Melanie Colby Rome`)
	r := rand.New(rand.NewPCG(2, 2))
	out := make([]string, n)
	for i := range out {
		var sb strings.Builder
		for range words {
			sb.WriteString(vocab[r.IntN(len(vocab))])
			sb.WriteByte(' ')
		}
		out[i] = sb.String()
	}
	return out
}

// softRandomTexts returns n texts of words words each, drawn uniformly from the vocabulary's
// rows 100 to 20,000: nearly every word distinct, the slowest case for SoftMatch.
func softRandomTexts(tb testing.TB, n, words int) []string {
	g, err := loadBuiltin()
	if err != nil {
		tb.Fatal(err)
	}
	vocab := make([]string, g.numRows)
	for w, r := range g.rows {
		vocab[r] = w
	}
	r := rand.New(rand.NewPCG(3, 3))
	out := make([]string, n)
	for i := range out {
		ws := make([]string, words)
		for j := range ws {
			ws[j] = vocab[100+r.IntN(19_900)]
		}
		out[i] = strings.Join(ws, " ")
	}
	return out
}

func BenchmarkBuiltin_SoftMatch(b *testing.B) {
	e := NewBuiltin()
	query := "What did Melanie paint after her trip to the beach with the kids?"
	e.SoftMatch(query, nil, nil) // load
	for _, c := range []struct {
		name  string
		texts []string
	}{
		{"everyday/texts=80/words=15", softBenchTexts(80, 15)},
		{"everyday/texts=80/words=30", softBenchTexts(80, 30)},
		{"distinct/texts=80/words=15", softRandomTexts(b, 80, 15)},
		{"distinct/texts=160/words=30", softRandomTexts(b, 160, 30)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.SoftMatch(query, c.texts, nil)
			}
		})
	}
}
