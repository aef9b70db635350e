// Command annbench measures vector.HNSW side by side with hnswlib, the reference C++ HNSW
// (through the npm package hnswlib-node, pinned in testdata/annbench), on identical data in
// the same run:
//
//	go run ./cmd/annbench -out /tmp/annbench
//
// For each dataset it writes the base vectors, the queries and their exact 10 nearest
// neighbours (found by vector.Exact) to DIR in the format that package dataset documents,
// builds our index at M 16, efConstruction 200 with -workers goroutines and searches every
// query at each efSearch, then runs `node testdata/annbench/hnswlib.mjs DIR NAME` (after
// `npm ci` there, when its node_modules is missing), which builds hnswlib single-threaded
// on the same files, and prints one table comparing recall@10, query latency, build time and
// memory per vector. -hnswlib=false measures ours alone.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/ownsona/ownsona/internal/anndata"
	"github.com/ownsona/ownsona/vector"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "annbench:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	out      string
	sets     []spec
	queries  int
	k        int
	efs      []int
	workers  int
	seed     uint64
	hnswlib  bool
	nodeDir  string // testdata/annbench
	clusters int
}

// spec names a dataset: kind ("clustered" or "random"), n and dim.
type spec struct {
	kind   string
	n, dim int
}

func (s spec) String() string { return fmt.Sprintf("%s-%dx%d", s.kind, s.n, s.dim) }

func parseConfig(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("annbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	var sets, efs string
	fs.StringVar(&c.out, "out", "", "directory for the dataset files (required)")
	fs.StringVar(&sets, "sets", "clustered-100000x256", `datasets, comma-separated, each KIND-NxDIM with KIND "clustered" or "random"; "all" is clustered-100000x256,clustered-100000x100,clustered-20000x768`)
	fs.IntVar(&c.queries, "queries", 1000, "queries per dataset")
	fs.StringVar(&efs, "ef", "16,32,64,128,256", "efSearch values, comma-separated")
	fs.IntVar(&c.workers, "workers", 2, "goroutines building our index")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the datasets")
	fs.IntVar(&c.clusters, "clusters", 100, "clusters of a clustered dataset")
	fs.BoolVar(&c.hnswlib, "hnswlib", true, "also run hnswlib through node")
	fs.StringVar(&c.nodeDir, "node-dir", "testdata/annbench", "directory of hnswlib.mjs and its package.json")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.out == "" {
		return c, errors.New("-out is required")
	}
	c.k = 10
	if sets == "all" {
		sets = "clustered-100000x256,clustered-100000x100,clustered-20000x768"
	}
	for _, s := range strings.Split(sets, ",") {
		var sp spec
		kind, size, ok := strings.Cut(strings.TrimSpace(s), "-")
		ns, ds, ok2 := strings.Cut(size, "x")
		n, err1 := strconv.Atoi(ns)
		d, err2 := strconv.Atoi(ds)
		if !ok || !ok2 || err1 != nil || err2 != nil || n <= 0 || d <= 0 || (kind != "clustered" && kind != "random") {
			return c, fmt.Errorf("-sets: %q is not KIND-NxDIM", s)
		}
		sp.kind, sp.n, sp.dim = kind, n, d
		c.sets = append(c.sets, sp)
	}
	for _, s := range strings.Split(efs, ",") {
		ef, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || ef <= 0 {
			return c, fmt.Errorf("-ef: %q is not a positive number", s)
		}
		c.efs = append(c.efs, ef)
	}
	if c.queries <= 0 || c.workers <= 0 || c.clusters <= 0 {
		return c, errors.New("-queries, -workers and -clusters must be positive")
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseConfig(args, stderr)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	if c.hnswlib {
		if err := npmCI(ctx, c.nodeDir, stderr); err != nil {
			return err
		}
	}
	for _, sp := range c.sets {
		if err := benchSet(ctx, c, sp, stdout, stderr); err != nil {
			return fmt.Errorf("%s: %w", sp, err)
		}
	}
	return nil
}

// result is one efSearch's measurements, as hnswlib.mjs prints them.
type result struct {
	Ef     int     `json:"ef"`
	Recall float64 `json:"recall"`
	P50    float64 `json:"p50_ms"`
	P99    float64 `json:"p99_ms"`
}

// report is one index's measurements on one dataset, as hnswlib.mjs prints them.
type report struct {
	BuildSeconds   float64  `json:"build_seconds"`
	BytesPerVector float64  `json:"bytes_per_vector"`     // from the data structures' sizes
	Measured       float64  `json:"rss_bytes_per_vector"` // growth of the Go heap or of the process's RSS, per vector
	Results        []result `json:"results"`
}

func benchSet(ctx context.Context, c config, sp spec, stdout, stderr io.Writer) error {
	name := sp.String()
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, name+": "+format+"\n", args...) }
	var set anndata.Set
	if sp.kind == "clustered" {
		set = anndata.Clustered(c.seed, sp.n, c.queries, sp.dim, c.clusters)
	} else {
		set = anndata.Random(c.seed, sp.n, c.queries, sp.dim)
	}
	logf("computing the exact neighbours of %d queries", c.queries)
	truth := exactNeighbors(set, c.k)
	prefix := filepath.Join(c.out, name)
	if err := anndata.WriteVectors(prefix+".base.f32", set.Dim, set.Base); err != nil {
		return err
	}
	if err := anndata.WriteVectors(prefix+".queries.f32", set.Dim, set.Queries); err != nil {
		return err
	}
	if err := anndata.WriteNeighbors(prefix+".truth.u32", c.k, truth); err != nil {
		return err
	}

	logf("building ours with %d workers", c.workers)
	ours, stats := benchOurs(c, set, truth)
	var theirs *report
	if c.hnswlib {
		logf("building hnswlib (single-threaded)")
		theirs, err := runHNSWLib(ctx, c, name, stderr)
		if err != nil {
			return err
		}
		return printTable(stdout, c, set, stats, ours, theirs)
	}
	return printTable(stdout, c, set, stats, ours, theirs)
}

// exactNeighbors returns each query's k nearest base rows, by vector.Exact on all cores.
func exactNeighbors(set anndata.Set, k int) [][]uint32 {
	e := vector.NewExact(set.Dim)
	for i, v := range set.Base {
		e.Add(uint64(i), v)
	}
	truth := make([][]uint32, len(set.Queries))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(set.Queries); i += workers {
				for _, s := range e.Search(set.Queries[i], k, nil) {
					truth[i] = append(truth[i], uint32(s.ID))
				}
			}
		})
	}
	wg.Wait()
	return truth
}

func benchOurs(c config, set anndata.Set, truth [][]uint32) (*report, vector.HNSWStats) {
	ids := make([]uint64, len(set.Base))
	for i := range ids {
		ids[i] = uint64(i)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	h := vector.NewHNSW(vector.HNSWConfig{M: 16, EfConstruction: 200, Seed: c.seed})
	start := time.Now()
	if err := h.Build(ids, set.Base, c.workers); err != nil {
		panic(err) // the dataset is ours: every vector is finite and of the same length
	}
	r := &report{BuildSeconds: time.Since(start).Seconds()}
	runtime.GC()
	runtime.ReadMemStats(&after)
	stats := h.Stats()
	r.BytesPerVector = stats.BytesPerVector
	r.Measured = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(len(set.Base))

	for i := range min(len(set.Queries), 200) { // warm up, as hnswlib.mjs does
		h.SearchEf(set.Queries[i], c.k, 16, nil)
	}
	lat := make([]time.Duration, len(set.Queries))
	for _, ef := range c.efs {
		hits := 0
		for i, q := range set.Queries {
			t0 := time.Now()
			got := h.SearchEf(q, c.k, ef, nil)
			lat[i] = time.Since(t0)
			for _, g := range got {
				if slices.Contains(truth[i], uint32(g.ID)) {
					hits++
				}
			}
		}
		slices.Sort(lat)
		r.Results = append(r.Results, result{
			Ef:     ef,
			Recall: float64(hits) / float64(len(set.Queries)*c.k),
			P50:    ms(lat[len(lat)/2]),
			P99:    ms(lat[min(len(lat)-1, len(lat)*99/100)]),
		})
	}
	runtime.KeepAlive(h)
	return r, stats
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func npmCI(ctx context.Context, dir string, stderr io.Writer) error {
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "hnswlib-node", "build", "Release", "addon.node")); err == nil {
		return nil
	}
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, stderr, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm ci in %s: %w", dir, err)
	}
	return nil
}

func runHNSWLib(ctx context.Context, c config, name string, stderr io.Writer) (*report, error) {
	efs := make([]string, len(c.efs))
	for i, ef := range c.efs {
		efs[i] = strconv.Itoa(ef)
	}
	out, err := filepath.Abs(c.out)
	if err != nil {
		return nil, err
	}
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, "node", "--expose-gc", "hnswlib.mjs", out, name, strings.Join(efs, ","))
	cmd.Dir, cmd.Stdout, cmd.Stderr = c.nodeDir, &stdout, stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("node hnswlib.mjs: %w", err)
	}
	var r report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		return nil, fmt.Errorf("node hnswlib.mjs printed %q: %w", stdout.String(), err)
	}
	return &r, nil
}

func printTable(w io.Writer, c config, set anndata.Set, stats vector.HNSWStats, ours, theirs *report) error {
	n := len(set.Base)
	fmt.Fprintf(w, "\n%s: %d vectors, %d queries, recall@%d, M 16, efConstruction 200, GOMAXPROCS %d\n",
		set.Name, n, len(set.Queries), c.k, runtime.GOMAXPROCS(0))
	fmt.Fprintf(w, "build: ours %.1f s with %d workers (%.0f inserts/s)", ours.BuildSeconds, c.workers, float64(n)/ours.BuildSeconds)
	if theirs != nil {
		fmt.Fprintf(w, ", hnswlib %.1f s single-threaded (%.0f inserts/s), ratio %.2f",
			theirs.BuildSeconds, float64(n)/theirs.BuildSeconds, ours.BuildSeconds/theirs.BuildSeconds)
	}
	fmt.Fprintf(w, "\nbytes per vector: ours %.0f (structures; %d layers) and %.0f (Go heap growth)",
		ours.BytesPerVector, stats.Layers, ours.Measured)
	if theirs != nil {
		fmt.Fprintf(w, ", hnswlib %.0f (structures) and %.0f (RSS growth)", theirs.BytesPerVector, theirs.Measured)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if theirs == nil {
		fmt.Fprintln(tw, "efSearch\trecall ours\tp50 ours ms\tp99 ours ms\t")
		for _, r := range ours.Results {
			fmt.Fprintf(tw, "%d\t%.3f\t%.3f\t%.3f\t\n", r.Ef, r.Recall, r.P50, r.P99)
		}
		return tw.Flush()
	}
	fmt.Fprintln(tw, "efSearch\trecall ours\trecall hnswlib\tp50 ours ms\tp50 hnswlib ms\tp50 ratio\tp99 ours ms\tp99 hnswlib ms\t")
	for i, r := range ours.Results {
		t := theirs.Results[i]
		fmt.Fprintf(tw, "%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.2f\t%.3f\t%.3f\t\n",
			r.Ef, r.Recall, t.Recall, r.P50, t.P50, r.P50/t.P50, r.P99, t.P99)
	}
	return tw.Flush()
}
