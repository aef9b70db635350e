package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/ownsona/ownsona/vector"
)

// runVariants measures the design choices of the builtin embedder and of the hybrid ranking.
func runVariants(e *env, lex [][]vector.Scored, asset string, groups []string, w io.Writer) error {
	base, err := loadLab(asset, labOpts{})
	if err != nil {
		return err
	}
	// The lab with the shipped choices must give the builtin embedder's vectors.
	{
		l := base.clone(labOpts{NameWeight: 0.01, NameSide: "query", Time: true})
		emb := vector.NewBuiltin()
		var worst float64
		for _, kind := range []vector.Kind{vector.Document, vector.Query} {
			texts := e.ds.texts
			if kind == vector.Query {
				texts = nil
				for _, q := range e.ds.queries {
					texts = append(texts, q.text)
				}
			}
			got, err := emb.Embed(context.Background(), texts, kind)
			if err != nil {
				return err
			}
			for i, s := range texts {
				want := l.embedKind(s, kind)
				for j := range want {
					worst = max(worst, math.Abs(float64(got[i][j]-want[j])))
				}
			}
		}
		fmt.Fprintf(w, "lab vs builtin: largest difference of a vector component %.2g\n\n", worst)
		if worst > 1e-4 {
			return fmt.Errorf("the lab does not reproduce the builtin embedder (difference %g): its measurements would not be of what ships", worst)
		}
	}
	on := func(g string) bool {
		return slices.Contains(groups, g) || slices.Contains(groups, "all") && g != "n" && g != "failures"
	}
	t := &table{w: w}
	var store []string
	store = append(store, e.ds.texts...)

	measure := func(name string, l *lab, wl, wd float32) [][]vector.Scored {
		d := e.dense(func(texts []string, kind vector.Kind) [][]float32 {
			out := make([][]float32, len(texts))
			for i, s := range texts {
				out[i] = l.embedKind(s, kind)
			}
			return out
		})
		dl := e.denseLists(d)
		t.row(name+" dense", score(e.ds, cut(dl, e.k)))
		t.row(fmt.Sprintf("%s hybrid %.2g/%.2g", name, wl, wd), score(e.ds, fuseAll(lex, dl, wl, wd, e.k)))
		return dl
	}
	variant := func(mod func(o *labOpts)) *lab {
		o := labOpts{}
		mod(&o)
		l := base.clone(o)
		if o.Weights == "store" || o.PC == "store" {
			l.setCounts(store)
		}
		if o.PC == "store" {
			l.fitPC(store)
		}
		return l
	}

	if on("sif") {
		for _, a := range []float64{1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5} {
			measure(fmt.Sprintf("zipf a=%g", a), variant(func(o *labOpts) { o.A = a }), 0.5, 0.5)
		}
		measure("no weights", variant(func(o *labOpts) { o.Weights = "none" }), 0.5, 0.5)
		measure("no weights, no pc", variant(func(o *labOpts) { o.Weights = "none"; o.PC = "none" }), 0.5, 0.5)
		for _, a := range []float64{1e-2, 3e-3, 1e-3, 3e-4, 1e-4} {
			measure(fmt.Sprintf("store a=%g", a), variant(func(o *labOpts) { o.Weights = "store"; o.StoreA = a }), 0.5, 0.5)
			measure(fmt.Sprintf("store a=%g, store pc", a), variant(func(o *labOpts) { o.Weights = "store"; o.StoreA = a; o.PC = "store" }), 0.5, 0.5)
		}
	}
	best := func(o *labOpts) { o.PC = "uniform"; o.NameWeight = 0.01; o.NameSide = "query" }
	if on("freq") && len(subtlex) > 0 {
		for _, a := range []float64{1e-2, 3e-3, 1e-3, 3e-4, 1e-4} {
			measure(fmt.Sprintf("subtlex a=%g", a), variant(func(o *labOpts) { o.Weights = "subtlex"; o.StoreA = a; o.ZipfScale = 1 }), 0.5, 0.5)
		}
		for _, zs := range []float64{0.1, 0.01} {
			measure(fmt.Sprintf("subtlex a=1e-3 zipf×%g", zs), variant(func(o *labOpts) { o.Weights = "subtlex"; o.ZipfScale = zs }), 0.5, 0.5)
		}
		measure("max(subtlex,zipf) a=1e-3", variant(func(o *labOpts) { o.Weights = "max" }), 0.5, 0.5)
		measure("geo(subtlex,zipf) a=1e-3", variant(func(o *labOpts) { o.Weights = "geo" }), 0.5, 0.5)
		measure("subtlex a=1e-3 names ×0.01", variant(func(o *labOpts) { o.Weights = "subtlex"; o.ZipfScale = 1; o.NameWeight = 0.01 }), 0.5, 0.5)
		measure("store a=1e-3 names ×0.01", variant(func(o *labOpts) { o.Weights = "store"; o.NameWeight = 0.01 }), 0.5, 0.5)
	}
	if on("names") {
		l := variant(func(o *labOpts) {})
		for _, w := range []string{"caroline", "melanie", "mel", "colby", "jon", "gina", "john", "los", "angeles", "paris", "grace", "rose", "will", "mark", "coffee", "son", "dog", "rex", "max", "art", "joy", "hope", "june", "april", "august"} {
			if r, ok := l.index[w]; ok {
				fmt.Fprintf(w2(t), "%s:%.2f ", w, l.nameScore(r))
			}
		}
		fmt.Fprintln(t.w)
		for _, th := range []float64{0.4, 0.5, 0.6, 0.7} {
			for _, f := range []float64{0, 0.1} {
				measure(fmt.Sprintf("name-like ≥%g ×%g", th, f), variant(func(o *labOpts) { o.NameLike = th; o.NameLikeW = f }), 0.5, 0.5)
			}
		}
		for _, side := range []string{"query", "doc"} {
			measure("capitalized ×0.01 in "+side+" only", variant(func(o *labOpts) { o.NameWeight = 0.01; o.NameSide = side }), 0.5, 0.5)
		}
		for _, f := range []float64{0.01, 0.1, 0.3} {
			measure(fmt.Sprintf("capitalized and labels ×%g", f), variant(func(o *labOpts) { o.NameWeight = f; o.Label = true }), 0.5, 0.5)
		}
		measure("subtlex + capitalized and labels ×0.01", variant(func(o *labOpts) { o.NameWeight = 0.01; o.Label = true; o.Weights = "subtlex"; o.ZipfScale = 1 }), 0.5, 0.5)
		measure("store + capitalized and labels ×0.01", variant(func(o *labOpts) { o.NameWeight = 0.01; o.Label = true; o.Weights = "store" }), 0.5, 0.5)
		measure("name-like ≥0.5 ×0 + capitalized ×0.01", variant(func(o *labOpts) { o.NameLike = 0.5; o.NameWeight = 0.01 }), 0.5, 0.5)
		measure("subtlex + name-like ≥0.5 ×0", variant(func(o *labOpts) { o.NameLike = 0.5; o.Weights = "subtlex"; o.ZipfScale = 1 }), 0.5, 0.5)
	}
	if on("pc") {
		measure("asset pc", variant(func(o *labOpts) {}), 0.5, 0.5)
		measure("no pc", variant(func(o *labOpts) { o.PC = "none" }), 0.5, 0.5)
		measure("store pc", variant(func(o *labOpts) { o.PC = "store" }), 0.5, 0.5)
		for _, m := range []string{"uniform", "mean", "top"} {
			measure("vocab pc "+m, variant(func(o *labOpts) { o.PC = m }), 0.5, 0.5)
			measure("vocab pc "+m+", query names ×0.01", variant(func(o *labOpts) { o.PC = m; o.NameWeight = 0.01; o.NameSide = "query" }), 0.5, 0.5)
		}
		measure("no pc, query names ×0.01", variant(func(o *labOpts) { o.PC = "none"; o.NameWeight = 0.01; o.NameSide = "query" }), 0.5, 0.5)
		measure("asset pc, query names ×0.01", variant(func(o *labOpts) { o.NameWeight = 0.01; o.NameSide = "query" }), 0.5, 0.5)
		measure("store pc, query names ×0.01", variant(func(o *labOpts) { o.PC = "store"; o.NameWeight = 0.01; o.NameSide = "query" }), 0.5, 0.5)
		measure("unit word vectors", variant(func(o *labOpts) { o.UnitWords = true }), 0.5, 0.5)
	}
	if on("tok") {
		measure("baseline", variant(func(o *labOpts) {}), 0.5, 0.5)
		measure("no plural fallback", variant(func(o *labOpts) { o.NoPlural = true }), 0.5, 0.5)
		measure("no contractions", variant(func(o *labOpts) { o.NoContract = true }), 0.5, 0.5)
		measure("oov skipped", variant(func(o *labOpts) { o.OOV = "skip" }), 0.5, 0.5)
		for _, n := range []float64{1, 2.5, 10} {
			measure(fmt.Sprintf("oov norm %g", n), variant(func(o *labOpts) { o.OOVNorm = n }), 0.5, 0.5)
		}
		measure("single letters as ngrams", variant(func(o *labOpts) { o.Letters = "ngram" }), 0.5, 0.5)
		measure("numbers as ngrams", variant(func(o *labOpts) { o.Numbers = "ngram" }), 0.5, 0.5)
		measure("numbers spelled out", variant(func(o *labOpts) { o.Numbers = "words" }), 0.5, 0.5)
		measure("stopwords dropped", variant(func(o *labOpts) { o.Stop = true }), 0.5, 0.5)
		for _, nw := range []float64{0.01, 0.5, 2} {
			measure(fmt.Sprintf("names ×%g", nw), variant(func(o *labOpts) { o.NameWeight = nw }), 0.5, 0.5)
		}
	}
	if on("n") {
		fmt.Fprintln(w, "asset", asset)
		for _, n := range []int{10000, 20000, 30000, 50000, 70000, 100000, 150000, 200000} {
			measure(fmt.Sprintf("N=%d", n), variant(func(o *labOpts) { best(o); o.N = n }), 0.5, 0.5)
		}
	}
	if on("a") {
		for _, a := range []float64{3e-3, 1e-3, 3e-4, 1e-4} {
			measure(fmt.Sprintf("best, a=%g", a), variant(func(o *labOpts) { best(o); o.A = a }), 0.5, 0.5)
		}
		measure("best, stopwords dropped", variant(func(o *labOpts) { best(o); o.Stop = true }), 0.5, 0.5)
		measure("best, oov skipped", variant(func(o *labOpts) { best(o); o.OOV = "skip" }), 0.5, 0.5)
		measure("best, oov norm 2.5", variant(func(o *labOpts) { best(o); o.OOVNorm = 2.5 }), 0.5, 0.5)
		measure("best, oov norm 10", variant(func(o *labOpts) { best(o); o.OOVNorm = 10 }), 0.5, 0.5)
	}
	if on("rank") {
		if err := runRank(e, base, t, w); err != nil {
			return err
		}
	}
	if on("store") {
		sweep := func(name string, l *lab) {
			d := e.dense(func(texts []string, kind vector.Kind) [][]float32 {
				out := make([][]float32, len(texts))
				for i, s := range texts {
					out[i] = l.embedKind(s, kind)
				}
				return out
			})
			dl := e.denseLists(d)
			t.row(name+" dense", score(e.ds, cut(dl, e.k)))
			for _, wd := range []float32{0.4, 0.5, 0.6, 0.7} {
				t.row(fmt.Sprintf("%s hybrid %.1f/%.1f", name, 1-wd, wd), score(e.ds, fuseAll(lex, dl, 1-wd, wd, e.k)))
			}
		}
		for _, a := range []float64{3e-3, 1e-3, 3e-4} {
			sweep(fmt.Sprintf("store a=%g", a), variant(func(o *labOpts) { o.Weights = "store"; o.StoreA = a }))
			sweep(fmt.Sprintf("store a=%g, uniform pc", a), variant(func(o *labOpts) { o.Weights = "store"; o.StoreA = a; o.PC = "uniform" }))
			sweep(fmt.Sprintf("store a=%g, store pc", a), variant(func(o *labOpts) { o.Weights = "store"; o.StoreA = a; o.PC = "store" }))
			sweep(fmt.Sprintf("store a=%g, query names ×0.01", a), variant(func(o *labOpts) { o.Weights = "store"; o.StoreA = a; o.NameWeight = 0.01; o.NameSide = "query" }))
		}
		sweep("zipf best", variant(best))
	}
	if on("fuse") || on("norm") || on("qe") || on("prf") || on("soft") || on("softstore") || on("failures") {
		bl := variant(best)
		d := e.dense(func(texts []string, kind vector.Kind) [][]float32 {
			out := make([][]float32, len(texts))
			for i, s := range texts {
				out[i] = bl.embedKind(s, kind)
			}
			return out
		})
		dl := e.denseLists(d)
		if on("norm") {
			runNorms(e, t, lex, dl)
		}
		if on("soft") {
			runSoft(e, t, "Zipf weights: ", bl, lex, dl)
		}
		if on("softstore") {
			sl := variant(func(o *labOpts) { best(o); o.Weights = "store" })
			runSoft(e, t, "store weights: ", sl, lex, dl)
			sd := e.denseLists(e.dense(func(texts []string, kind vector.Kind) [][]float32 {
				out := make([][]float32, len(texts))
				for i, s := range texts {
					out[i] = sl.embedKind(s, kind)
				}
				return out
			}))
			runSoft(e, t, "store weights, store-weighted dense: ", sl, lex, sd)
		}
		if on("qe") {
			runQE(e, t, bl, lex, dl, w)
		}
		if on("prf") {
			runPRF(e, t, d, lex, dl)
		}
		if on("failures") {
			failures(e, fuseAll(lex, dl, 0.5, 0.5, e.k), 4, 40, w)
		}
		if !on("fuse") {
			return nil
		}
		byCategory(e, "BM25", lex, w)
		byCategory(e, "dense", dl, w)
		byCategory(e, "hybrid", fuseAll(lex, dl, 0.5, 0.5, e.k), w)
		for _, wd := range []float32{0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7} {
			t.row(fmt.Sprintf("min-max %.2g·BM25 + %.2g·dense", 1-wd, wd), score(e.ds, fuseAll(lex, dl, 1-wd, wd, e.k)))
		}
		for _, c := range []float64{1, 5, 10, 20, 60} {
			rr := make([][]vector.Scored, len(lex))
			for i := range rr {
				rr[i] = rrf([][]vector.Scored{lex[i], dl[i]}, c, e.k)
			}
			t.row(fmt.Sprintf("RRF k=%g", c), score(e.ds, rr))
		}
		for _, depth := range []int{20, 50, 80} {
			out := make([][]vector.Scored, len(lex))
			for i := range lex {
				out[i] = vector.Fuse(lex[i][:min(depth, len(lex[i]))], dl[i][:min(depth, len(dl[i]))], 0.5, 0.5, e.k)
			}
			t.row(fmt.Sprintf("min-max 0.5/0.5, %d candidates per list", depth), score(e.ds, out))
		}
	}
	return nil
}

func w2(t *table) io.Writer { return t.w }

// byCategory prints recall@10 per query category.
func byCategory(e *env, name string, lists [][]vector.Scored, w io.Writer) {
	type acc struct {
		n   int
		r10 float64
	}
	cats := map[int]*acc{}
	for i, q := range e.ds.queries {
		a := cats[q.category]
		if a == nil {
			a = &acc{}
			cats[q.category] = a
		}
		a.n++
		hit := 0
		for _, s := range lists[i][:min(10, len(lists[i]))] {
			if slices.Contains(q.evidence, s.ID) {
				hit++
			}
		}
		a.r10 += float64(hit) / float64(len(q.evidence))
	}
	fmt.Fprintf(w, "%s R@10 by category:", name)
	for c := 1; c <= 5; c++ {
		if a := cats[c]; a != nil {
			fmt.Fprintf(w, " %d: %.3f (%d)", c, a.r10/float64(a.n), a.n)
		}
	}
	fmt.Fprintln(w)
}

// failures prints queries whose evidence the list misses in its top 10.
func failures(e *env, lists [][]vector.Scored, cat, limit int, w io.Writer) {
	n := 0
	for i, q := range e.ds.queries {
		if q.category != cat {
			continue
		}
		hit := false
		for _, s := range lists[i][:min(10, len(lists[i]))] {
			if slices.Contains(q.evidence, s.ID) {
				hit = true
			}
		}
		if hit {
			continue
		}
		fmt.Fprintf(w, "Q: %s\n", q.text)
		for _, id := range q.evidence {
			fmt.Fprintf(w, "   E: %s\n", e.ds.texts[id-1])
		}
		if n++; n == limit {
			return
		}
	}
}

// fuseN is vector.Fuse over any number of lists.
func fuseN(lists [][]vector.Scored, ws []float32, k int) []vector.Scored {
	acc := map[uint64]float32{}
	for li, l := range lists {
		if len(l) == 0 {
			continue
		}
		lo, hi := l[0].Score, l[0].Score
		for _, s := range l {
			lo, hi = min(lo, s.Score), max(hi, s.Score)
		}
		for _, s := range l {
			n := float32(1)
			if hi > lo {
				n = (s.Score - lo) / (hi - lo)
			}
			acc[s.ID] += ws[li] * n
		}
	}
	out := make([]vector.Scored, 0, len(acc))
	for id, s := range acc {
		out = append(out, vector.Scored{ID: id, Score: s})
	}
	slices.SortFunc(out, func(a, b vector.Scored) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		if a.ID > b.ID {
			return -1
		}
		return 1
	})
	return out[:min(k, len(out))]
}

// expansion returns the query's content words' vocabulary neighbours, joined.
func expansion(l *lab, q string, m int, minSim float32, limit int) string {
	var out []string
	for _, t := range l.tokens(q) {
		if vector.IsStopword(t.w) || t.name || len(t.w) < 3 {
			continue
		}
		out = append(out, l.neighbours(t.w, m, minSim, limit)...)
	}
	return strings.Join(out, " ")
}

func runQE(e *env, t *table, l *lab, lex, dl [][]vector.Scored, w io.Writer) {
	for _, cfg := range []struct {
		m     int
		sim   float32
		limit int
	}{{1, 0.6, 50000}, {3, 0.6, 50000}, {5, 0.5, 50000}, {3, 0.7, 50000}, {5, 0.6, 20000}, {10, 0.5, 20000}} {
		exp := make([][]vector.Scored, len(e.ds.queries))
		plus := make([][]vector.Scored, len(e.ds.queries))
		for i, q := range e.ds.queries {
			x := expansion(l, q.text, cfg.m, cfg.sim, cfg.limit)
			if i < 3 {
				fmt.Fprintf(w, "expansion of %q: %s\n", q.text, x)
			}
			exp[i] = e.lex.Search(x, e.depth, e.filter(q.tag))
			plus[i] = e.lex.Search(q.text+" "+x, e.depth, e.filter(q.tag))
		}
		name := fmt.Sprintf("QE m=%d sim≥%.1f top %dk", cfg.m, cfg.sim, cfg.limit/1000)
		t.row(name+": BM25(query+expansion)", score(e.ds, cut(plus, e.k)))
		t.row(name+": Fuse(BM25(query+expansion), dense) 0.5/0.5", score(e.ds, fuseAll(plus, dl, 0.5, 0.5, e.k)))
		for _, we := range []float32{0.1, 0.2, 0.3} {
			out := make([][]vector.Scored, len(lex))
			for i := range lex {
				out[i] = fuseN([][]vector.Scored{lex[i], dl[i], exp[i]}, []float32{0.5, 0.5, we}, e.k)
			}
			t.row(fmt.Sprintf("%s: 0.5·BM25 + 0.5·dense + %.1f·BM25(expansion)", name, we), score(e.ds, out))
		}
	}
}

func runPRF(e *env, t *table, d *denseRun, lex, dl [][]vector.Scored) {
	for _, m := range []int{1, 3, 5} {
		for _, beta := range []float32{0.3, 0.5, 1} {
			out := make([][]vector.Scored, len(lex))
			outD := make([][]vector.Scored, len(lex))
			for i, q := range e.ds.queries {
				first := vector.Fuse(lex[i], dl[i], 0.5, 0.5, m)
				qv := append([]float32(nil), d.qvec[i]...)
				for _, s := range first {
					dv := d.dvec[s.ID-1]
					for j := range qv {
						qv[j] += beta / float32(len(first)) * dv[j]
					}
				}
				outD[i] = d.idx.Search(qv, e.depth, e.filter(q.tag))
				out[i] = vector.Fuse(lex[i], outD[i], 0.5, 0.5, e.k)
			}
			t.row(fmt.Sprintf("dense PRF from top %d fused, β=%.1f: dense", m, beta), score(e.ds, cut(outD, e.k)))
			t.row(fmt.Sprintf("dense PRF from top %d fused, β=%.1f: hybrid 0.5/0.5", m, beta), score(e.ds, out))
		}
	}
}

// fuseNorm fuses with another normalization: "max" (s/max for BM25, raw cosine for dense),
// "z" (z-scores), "rank" (1 - rank/len).
func fuseNorm(mode string, lex, dense []vector.Scored, wl, wd float32, k int) []vector.Scored {
	norm := func(l []vector.Scored, isDense bool) map[uint64]float32 {
		out := map[uint64]float32{}
		if len(l) == 0 {
			return out
		}
		switch mode {
		case "max":
			for _, s := range l {
				if isDense {
					out[s.ID] = s.Score
				} else {
					out[s.ID] = s.Score / l[0].Score
				}
			}
		case "z":
			var mu, sd float64
			for _, s := range l {
				mu += float64(s.Score)
			}
			mu /= float64(len(l))
			for _, s := range l {
				sd += (float64(s.Score) - mu) * (float64(s.Score) - mu)
			}
			sd = max(1e-6, math.Sqrt(sd/float64(len(l))))
			for _, s := range l {
				out[s.ID] = float32((float64(s.Score) - mu) / sd)
			}
		case "maxz":
			// s/max for both
			for _, s := range l {
				out[s.ID] = s.Score / l[0].Score
			}
		}
		return out
	}
	nl, nd := norm(lex, false), norm(dense, true)
	floorL, floorD := float32(0), float32(0)
	if mode == "z" {
		// a missing id gets the list's lowest score
		floorL, floorD = 1e9, 1e9
		for _, v := range nl {
			floorL = min(floorL, v)
		}
		for _, v := range nd {
			floorD = min(floorD, v)
		}
		if len(nl) == 0 {
			floorL = 0
		}
		if len(nd) == 0 {
			floorD = 0
		}
	}
	ids := map[uint64]bool{}
	for id := range nl {
		ids[id] = true
	}
	for id := range nd {
		ids[id] = true
	}
	out := make([]vector.Scored, 0, len(ids))
	for id := range ids {
		a, ok := nl[id]
		if !ok {
			a = floorL
		}
		b, ok := nd[id]
		if !ok {
			b = floorD
		}
		out = append(out, vector.Scored{ID: id, Score: wl*a + wd*b})
	}
	slices.SortFunc(out, func(a, b vector.Scored) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		if a.ID > b.ID {
			return -1
		}
		return 1
	})
	return out[:min(k, len(out))]
}

func runNorms(e *env, t *table, lex, dl [][]vector.Scored) {
	for _, mode := range []string{"max", "maxz", "z"} {
		for _, wd := range []float32{0.3, 0.4, 0.5, 0.6} {
			out := make([][]vector.Scored, len(lex))
			for i := range lex {
				out[i] = fuseNorm(mode, lex[i], dl[i], 1-wd, wd, e.k)
			}
			t.row(fmt.Sprintf("fusion %s %.1f·BM25 + %.1f·dense", mode, 1-wd, wd), score(e.ds, out))
		}
	}
}

// softIndex holds each document's content words as unit vectors, for soft term matching.
type softIndex struct {
	l    *lab
	docs [][][]float32
	rows [][]int // the docs' words' rows
}

func (l *lab) unitRow(w string) []float32 {
	row, _ := l.lookup(w)
	if row < 0 {
		return nil
	}
	if l.unit == nil {
		l.unit = slices.Clone(l.vecs)
		for i := range len(l.words) {
			normalize(l.unit[i*l.dim : (i+1)*l.dim])
		}
	}
	return l.unit[row*l.dim : (row+1)*l.dim]
}

func newSoftIndex(l *lab, texts []string) *softIndex {
	s := &softIndex{l: l, docs: make([][][]float32, len(texts)), rows: make([][]int, len(texts))}
	for i, t := range texts {
		for _, tk := range l.tokens(t) {
			if vector.IsStopword(tk.w) {
				continue
			}
			if u := l.unitRow(tk.w); u != nil {
				s.docs[i] = append(s.docs[i], u)
				r, _ := l.lookup(tk.w)
				s.rows[i] = append(s.rows[i], r)
			}
		}
	}
	return s
}

// score is Σ_w weight(w)·max_u max(0, cos(w,u))^pow / Σ weight(w) over the query's content words.
func (s *softIndex) score(q string, id uint64, pow float64, noNames bool) float32 {
	return s.scoreOpts(q, id, softOpts{pow: pow, noNames: noNames})
}

// softOpts are the choices of a soft term match.
type softOpts struct {
	pow       float64 // sim is max(0, cos)^pow ...
	floor     float64 // ... or, when > 0, max(0, (cos − floor)/(1 − floor)), as vector.SoftMatch
	timeExact bool    // a query's time word matches only itself, as vector.SoftMatch
	noNames   bool    // capitalized words inside the question are skipped
}

// scoreOpts is Σ_w weight(w)·max_u sim(w,u) / Σ weight(w) over the query's content words, sim
// of a word with itself being 1.
func (s *softIndex) scoreOpts(q string, id uint64, o softOpts) float32 {
	var num, den float64
	for _, tk := range s.l.tokens(q) {
		if vector.IsStopword(tk.w) || (o.noNames && tk.name) {
			continue
		}
		row, w := s.l.lookup(tk.w)
		if row < 0 {
			continue
		}
		u := s.l.unitRow(tk.w)
		wt := s.l.weight(row, w)
		exact := o.timeExact && vector.IsTimeWord(tk.w)
		best := 0.0
		for k, dv := range s.docs[id-1] {
			if s.rows[id-1][k] == row {
				best = 1
				break
			}
			if exact {
				continue
			}
			var d float32
			for j := range u {
				d += u[j] * dv[j]
			}
			c := max(0, float64(d))
			if o.floor > 0 {
				c = max(0, (c-o.floor)/(1-o.floor))
			} else {
				c = math.Pow(c, o.pow)
			}
			best = max(best, c)
		}
		num += wt * best
		den += wt
	}
	if den == 0 {
		return 0
	}
	return float32(num / den)
}

func runSoft(e *env, t *table, prefix string, l *lab, lex, dl [][]vector.Scored) {
	s := newSoftIndex(l, e.ds.texts)
	for _, pow := range []float64{1, 3} {
		for _, noNames := range []bool{false, true} {
			soft := make([][]vector.Scored, len(lex))
			for i, q := range e.ds.queries {
				seen := map[uint64]bool{}
				for _, list := range [][]vector.Scored{lex[i], dl[i]} {
					for _, c := range list {
						if !seen[c.ID] {
							seen[c.ID] = true
							soft[i] = append(soft[i], vector.Scored{ID: c.ID, Score: s.score(q.text, c.ID, pow, noNames)})
						}
					}
				}
				slices.SortFunc(soft[i], func(a, b vector.Scored) int {
					if a.Score > b.Score {
						return -1
					}
					if a.Score < b.Score {
						return 1
					}
					return 0
				})
			}
			kept := "names kept"
			if noNames {
				kept = "names dropped"
			}
			name := fmt.Sprintf("%ssoft match cos^%g, %s", prefix, pow, kept)
			t.row(name+" alone (re-ranking the union)", score(e.ds, cut(soft, e.k)))
			for _, ws := range [][3]float32{{0.5, 0.5, 0.25}, {0.5, 0.5, 0.5}, {0.5, 0.25, 0.5}, {0.5, 0, 0.5}, {0.5, 0.5, 1}} {
				out := make([][]vector.Scored, len(lex))
				for i := range lex {
					out[i] = fuseN([][]vector.Scored{lex[i], dl[i], soft[i]}, ws[:], e.k)
				}
				t.row(fmt.Sprintf("%s: %.2g·BM25 + %.2g·dense + %.2g·soft", name, ws[0], ws[1], ws[2]), score(e.ds, out))
			}
		}
	}
}

// rankConfig is one variant of the app's ranking: BM25 with k1 and b, the builtin's cosine
// (with or without a question's time words), cut as the app cuts it, min-max fused, plus a
// soft term match as it is, weighted w.
type rankConfig struct {
	name    string
	k1, b   float64
	time    bool    // the question's time words are left out of its vector
	store   float64 // > 0: soft match weights from the store's counts blended with this many words of the Zipf prior; 0: the prior alone
	soft    softOpts
	w       [3]float32
	shipped bool
}

// runRank measures the choices of the app's ranking one by one, from the ranking before soft
// match weights came from the store (recall@10 0.663) to the shipped one, and around it. Soft
// matches are the lab's, checked against vector.SoftMatch.
func runRank(e *env, base *lab, t *table, w io.Writer) error {
	texts := e.ds.texts
	dense := map[bool][][]vector.Scored{}
	for _, tw := range []bool{false, true} {
		l := base.clone(labOpts{NameWeight: 0.01, NameSide: "query", Time: tw})
		dl := e.denseLists(e.dense(func(ts []string, kind vector.Kind) [][]float32 {
			out := make([][]float32, len(ts))
			for i, s := range ts {
				out[i] = l.embedKind(s, kind)
			}
			return out
		}))
		for i := range dl {
			dl[i] = vector.AtLeast(dl[i], vector.BuiltinMinCosine, vector.BuiltinCosineMargin)
		}
		dense[tw] = dl
	}
	lexical := map[[2]float64][][]vector.Scored{}
	lexOf := func(k1, b float64) [][]vector.Scored {
		if l, ok := lexical[[2]float64{k1, b}]; ok {
			return l
		}
		idx := vector.NewBM25With(k1, b)
		for i, s := range texts {
			idx.Add(uint64(i+1), s)
		}
		out := make([][]vector.Scored, len(e.ds.queries))
		for i, q := range e.ds.queries {
			out[i] = idx.Search(q.text, e.depth, e.filter(q.tag))
		}
		lexical[[2]float64{k1, b}] = out
		return out
	}
	softs := map[float64]*softIndex{}
	softOf := func(prior float64) *softIndex {
		if s, ok := softs[prior]; ok {
			return s
		}
		o := labOpts{}
		if prior > 0 {
			o = labOpts{Weights: "store", StorePrior: prior}
		}
		l := base.clone(o)
		l.setCounts(texts)
		softs[prior] = newSoftIndex(l, texts)
		return softs[prior]
	}
	shipped := softOpts{floor: 0.4, timeExact: true}
	// The lab's soft match, shipped choices, must be vector.SoftMatch's.
	{
		counts, err := vector.NewWordCounts()
		if err != nil {
			return err
		}
		for _, s := range texts {
			counts.Add(s)
		}
		emb := vector.NewBuiltin()
		lex, dl, si := lexOf(1.2, 0.4), dense[true], softOf(10000)
		var worst float64
		for i, q := range e.ds.queries[:200] {
			ids := vector.Candidates(lex[i], dl[i])
			cand := make([]string, len(ids))
			for j, id := range ids {
				cand[j] = texts[id-1]
			}
			got := emb.SoftMatch(q.text, cand, counts)
			for j, id := range ids {
				worst = max(worst, math.Abs(float64(got[j]-si.scoreOpts(q.text, id, shipped))))
			}
		}
		fmt.Fprintf(w, "lab soft match vs vector.SoftMatch: largest difference %.2g\n\n", worst)
		if worst > 1e-3 {
			return fmt.Errorf("the lab's soft match is not vector.SoftMatch (difference %g)", worst)
		}
	}
	before := rankConfig{name: "before: BM25 b 0.75, soft match Zipf-weighted and cubed, 0.6/0.4/1.2", k1: 1.2, b: 0.75, soft: softOpts{pow: 3}, w: [3]float32{0.6, 0.4, 1.2}}
	ship := rankConfig{name: "shipped", k1: 1.2, b: 0.4, time: true, store: 10000, soft: shipped,
		w: [3]float32{vector.BuiltinLexicalWeight, vector.BuiltinDenseWeight, vector.BuiltinSoftWeight}, shipped: true}
	step := func(c rankConfig, name string, mod func(c *rankConfig)) rankConfig {
		c.name, c.shipped = name, false
		mod(&c)
		return c
	}
	var cs []rankConfig
	c := before
	cs = append(cs, c)
	c = step(c, "+ soft match weighted by the store's counts (Zipf prior of 10,000 words)", func(c *rankConfig) { c.store = 10000 })
	cs = append(cs, c)
	c = step(c, "+ soft similarity linear above cosine 0.4, not cubed", func(c *rankConfig) { c.soft = softOpts{floor: 0.4} })
	cs = append(cs, c)
	c = step(c, "+ a question's time words: out of its vector, matched only by themselves", func(c *rankConfig) { c.time, c.soft.timeExact = true, true })
	cs = append(cs, c)
	c = step(c, "+ BM25 b 0.4", func(c *rankConfig) { c.b = 0.4 })
	cs = append(cs, c)
	cs = append(cs, ship)
	for _, v := range []struct {
		name string
		mod  func(c *rankConfig)
	}{
		{"shipped, but soft match weighted by the Zipf prior alone", func(c *rankConfig) { c.store = 0 }},
		{"shipped, but store counts with no prior", func(c *rankConfig) { c.store = 1e-9 }},
		{"shipped, but a prior of 3,000 words", func(c *rankConfig) { c.store = 3000 }},
		{"shipped, but a prior of 30,000 words", func(c *rankConfig) { c.store = 30000 }},
		{"shipped, but soft similarity cubed", func(c *rankConfig) { c.soft = softOpts{pow: 3, timeExact: true} }},
		{"shipped, but soft similarity squared", func(c *rankConfig) { c.soft = softOpts{pow: 2, timeExact: true} }},
		{"shipped, but soft similarity = cosine", func(c *rankConfig) { c.soft = softOpts{pow: 1, timeExact: true} }},
		{"shipped, but cut at cosine 0.3", func(c *rankConfig) { c.soft.floor = 0.3 }},
		{"shipped, but cut at cosine 0.5", func(c *rankConfig) { c.soft.floor = 0.5 }},
		{"shipped, but no time word handling", func(c *rankConfig) { c.time, c.soft.timeExact = false, false }},
		{"shipped, but time words only left out of the question's vector", func(c *rankConfig) { c.soft.timeExact = false }},
		{"shipped, but time words only matched by themselves", func(c *rankConfig) { c.time = false }},
		{"shipped, but BM25 b 0.75", func(c *rankConfig) { c.b = 0.75 }},
		{"shipped, but BM25 b 0.3", func(c *rankConfig) { c.b = 0.3 }},
		{"shipped, but BM25 b 0.5", func(c *rankConfig) { c.b = 0.5 }},
		{"shipped, but BM25 k1 0.9", func(c *rankConfig) { c.k1 = 0.9 }},
		{"shipped, but BM25 k1 1.5", func(c *rankConfig) { c.k1 = 1.5 }},
		{"shipped, but weights 0.6/0.4/1.2 (as before)", func(c *rankConfig) { c.w = [3]float32{0.6, 0.4, 1.2} }},
	} {
		cs = append(cs, step(ship, v.name, v.mod))
	}
	for _, c := range cs {
		lex, dl, si := lexOf(c.k1, c.b), dense[c.time], softOf(c.store)
		out := make([][]vector.Scored, len(lex))
		for i, q := range e.ds.queries {
			ids := vector.Candidates(lex[i], dl[i])
			bonus := make([]float32, len(ids))
			for j, id := range ids {
				bonus[j] = si.scoreOpts(q.text, id, c.soft)
			}
			out[i] = vector.FuseBonus(lex[i], dl[i], c.w[0], c.w[1], ids, bonus, c.w[2], e.k)
		}
		name := c.name
		if c.shipped {
			name = fmt.Sprintf("shipped: BM25 b 0.4; soft match by store counts, linear above 0.4, time words; %.2g/%.2g/%.2g", c.w[0], c.w[1], c.w[2])
		}
		t.row(name, score(e.ds, out))
	}
	return nil
}
