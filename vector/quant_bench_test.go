package vector

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"
)

// quantizeBF16 rounds each component of v to the nearest bfloat16 value (float32's top 16
// bits, round half to even).
func quantizeBF16(v []float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		b := math.Float32bits(x)
		b = (b + 0x7fff + (b>>16)&1) &^ 0xffff
		out[i] = math.Float32frombits(b)
	}
	return out
}

// quantizeI8 stores v as int8 with one scale per vector (max |x| maps to 127) and returns what
// an int8 kernel would compute with, scaled back.
func quantizeI8(v []float32) []float32 {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	out := make([]float32, len(v))
	if m == 0 {
		return out
	}
	s := m / 127
	for i, x := range v {
		out[i] = float32(math.Round(float64(x/s))) * s
	}
	return out
}

// BenchmarkHNSW_QuantizedRecall measures recall@10 against exact float32 search when the graph's
// vectors are quantized more coarsely than the float16 it stores (half.go), to bfloat16 or int8
// (built and searched on the quantized vectors, which the graph then rounds to float16 as it
// does every vector; queries kept in float32), beside the graph as it is, on the first HNSW
// set. exact-recall@10 is the ceiling: an exact search over the vectors the graph holds. It
// builds three graphs: run once.
//
//	go test ./vector -run '^$' -bench HNSW_QuantizedRecall -benchtime 1x -hnsw.sets 100000x100 -timeout 30m
func BenchmarkHNSW_QuantizedRecall(b *testing.B) {
	bs := loadBenchSet(hnswBenchSizes(b)[0][0], hnswBenchSizes(b)[0][1])
	for _, q := range []struct {
		name     string
		quantize func([]float32) []float32
	}{
		{"float16", func(v []float32) []float32 { return v }},
		{"bfloat16", quantizeBF16},
		{"int8", quantizeI8},
	} {
		vecs := make([][]float32, len(bs.set.Base))
		for i, v := range bs.set.Base {
			vecs[i] = q.quantize(normalized(v))
		}
		h := NewHNSW(HNSWConfig{Seed: 1})
		if err := h.Build(bs.ids, vecs, runtime.GOMAXPROCS(0)); err != nil {
			b.Fatal(err)
		}
		exactQ := NewExact(bs.set.Dim) // exact search over the vectors the graph holds: the ceiling
		for _, id := range bs.ids {
			v, _ := h.Get(id)
			exactQ.Add(id, v)
		}
		for _, ef := range []int{64, 128} {
			b.Run(fmt.Sprintf("%s/%s/ef=%d", bs.set.Name, q.name, ef), func(b *testing.B) {
				var hits, hitsExact, total int
				for b.Loop() {
					hits, hitsExact, total = 0, 0, 0
					for qi, query := range bs.set.Queries {
						in := func(s Scored) bool {
							return slices.ContainsFunc(bs.truth[qi], func(t Scored) bool { return t.ID == s.ID })
						}
						for _, s := range h.SearchEf(query, 10, ef, nil) {
							if in(s) {
								hits++
							}
						}
						if ef == 64 {
							for _, s := range exactQ.Search(query, 10, nil) {
								if in(s) {
									hitsExact++
								}
							}
						}
						total += len(bs.truth[qi])
					}
				}
				b.ReportMetric(float64(hits)/float64(total), "recall@10")
				if ef == 64 {
					b.ReportMetric(float64(hitsExact)/float64(total), "exact-recall@10")
				}
			})
		}
	}
}
