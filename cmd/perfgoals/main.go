// Command perfgoals measures the serving process against the performance goals of a 100k-memory
// store, for `make bench`: it drives the real binary, not the code in a test process, so the
// figures include the transports and the memory a server really keeps.
//
// For each binary given (-bin, and -base to compare with, usually the code before a change,
// built by `make bench` from BENCH_BASE), in the same run:
//
//   - load: `ownsona stdio` on a fresh file, remember_batch in calls of 200 with the default
//     dedup policy until -n memories: memories/s over stdio;
//   - remember one at a time, one client, over stdio at -n: memories/s;
//   - start `ownsona serve` on the loaded file (plain HTTP on loopback, personal access tokens):
//     time from exec to the first recall answered; recall latency while the HNSW graph builds
//     (until /health stops saying so); then recall p50/p99 over HTTP, one client;
//   - the serving process's resident memory (VmRSS) once the graph serves, right after the
//     recalls and 12 s later, at rest;
//   - remember over HTTP from one client and from 16 at once: memories/s;
//   - the file's size.
//
// The texts are the LoCoMo dev turns (-data, read at run time and never stored) repeated with the
// speakers' names varied, or, without that file, synthetic sentences. It prints one table: the
// goal, then each binary's figure, then new/base.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ownsona/ownsona/internal/corpus"
	"github.com/ownsona/ownsona/internal/serving"
)

func main() {
	bin := flag.String("bin", "bin/ownsona", "the binary to measure")
	base := flag.String("base", "", "a binary to compare with, measured in the same run (empty: none)")
	n := flag.Int("n", 100_000, "memories in the store")
	data := flag.String("data", "../shared/eval/locomo-dev", "a directory with memories.jsonl whose texts are repeated to -n; synthetic texts if absent")
	keep := flag.Bool("keep", false, "keep the files in the temporary directory")
	loaded := flag.String("db", "", "a file already loaded (by an earlier run with -keep): measure only the serving phases, each binary on a copy of it")
	flag.Parse()
	texts, source, err := corpus.Texts(*data, *n)
	if err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "perfgoals: %d memories from %s\n", *n, source)
	var runs []figures
	var names []string
	for _, b := range []string{*base, *bin} {
		if b == "" {
			continue
		}
		fmt.Fprintf(os.Stderr, "perfgoals: measuring %s\n", b)
		f, err := measure(b, texts, *loaded, *keep)
		if err != nil {
			fail(fmt.Errorf("%s: %w", b, err))
		}
		runs = append(runs, f)
		names = append(names, b)
	}
	printTable(names, runs, *n, source)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "perfgoals:", err)
	os.Exit(1)
}

// figures are one binary's measurements; a zero means not measured.
type figures map[string]float64

// goal is one row of the table: a figure, what it should be, and whether more is better.
type goal struct {
	key, label, target string
	higher             bool
	unit               string
}

var goals = []goal{
	{"load", "`remember_batch` ×200, default dedup, over stdio, loading to N", "≥ 10,000/s", true, "/s"},
	{"remember1", "`remember` one client over stdio at N", "≥ 1,000/s", true, "/s"},
	{"rememberHTTP1", "`remember` one client over HTTP at N", "≥ 1,000/s", true, "/s"},
	{"rememberHTTP16", "`remember` 16 clients over HTTP at N", "≥ 3,000/s", true, "/s"},
	{"startup", "start to the first `recall` answered at N (warm cache)", "≤ 1,000 ms", false, "ms"},
	{"buildP50", "`recall` p50 over HTTP while the graph builds", "≤ 10 ms", false, "ms"},
	{"buildSecs", "start until the graph serves (or none is needed)", "", false, "s"},
	{"recallP50", "`recall` p50 over HTTP, graph serving", "", false, "ms"},
	{"recallP99", "`recall` p99 over HTTP, graph serving", "", false, "ms"},
	{"rss", "serving process RSS at N, graph serving, after recalls", "≤ 190 MiB", false, "MiB"},
	{"rssRest", "serving process RSS at N, 12 s after the recalls (at rest)", "≤ 190 MiB", false, "MiB"},
	{"file", "file size at N", "", false, "MiB"},
}

func printTable(names []string, runs []figures, n int, source string) {
	fmt.Printf("\nServing process, %d memories (%s):\n\n| goal | target |", n, source)
	for _, name := range names {
		fmt.Printf(" %s |", filepath.Base(name))
	}
	if len(runs) == 2 {
		fmt.Printf(" new/base |")
	}
	fmt.Printf("\n|---|---|%s\n", strings.Repeat("---|", len(runs)+min(len(runs)-1, 1)))
	for _, g := range goals {
		fmt.Printf("| %s | %s |", strings.ReplaceAll(g.label, "N", fmt.Sprintf("%dk", n/1000)), g.target)
		for _, f := range runs {
			fmt.Printf(" %s |", format(f[g.key], g.unit))
		}
		if len(runs) == 2 {
			if b, v := runs[0][g.key], runs[1][g.key]; b > 0 && v > 0 {
				fmt.Printf(" %.2f× |", v/b)
			} else {
				fmt.Printf(" - |")
			}
		}
		fmt.Println()
	}
}

func format(v float64, unit string) string {
	switch {
	case v == 0:
		return "-"
	case unit == "/s":
		return fmt.Sprintf("%.0f/s", v)
	case v >= 100:
		return fmt.Sprintf("%.0f %s", v, unit)
	default:
		return fmt.Sprintf("%.2f %s", v, unit)
	}
}

// measure runs every phase against bin on a fresh file, or only the serving phases on a copy of
// loaded when that is not empty.
func measure(bin string, texts []string, loaded string, keep bool) (figures, error) {
	dir, err := os.MkdirTemp("", "ownsona-perfgoals-")
	if err != nil {
		return nil, err
	}
	if !keep {
		defer os.RemoveAll(dir)
	}
	db := filepath.Join(dir, "perf.db")
	f := figures{}
	if loaded != "" {
		b, err := os.ReadFile(loaded)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(db, b, 0o600); err != nil {
			return nil, err
		}
	} else if err := overStdio(bin, db, texts, f); err != nil {
		return nil, err
	}
	if err := overHTTP(bin, db, f); err != nil {
		return nil, err
	}
	if st, err := os.Stat(db); err == nil {
		f["file"] = float64(st.Size()) / (1 << 20)
	}
	return f, nil
}

// stdio is an MCP session with `ownsona stdio`.
type stdio struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	next int
}

func startStdio(bin, db string) (*stdio, error) {
	cmd := exec.Command(bin, "stdio", "--db", db, "--log-level", "error")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &stdio{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	if _, err := s.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "perfgoals", "version": "1"}}); err != nil {
		s.close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s, nil
}

func (s *stdio) call(method string, params any) (json.RawMessage, error) {
	s.next++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.next, "method": method, "params": params})
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("read answer: %w", err)
		}
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil || *msg.ID != s.next {
			continue // a notification
		}
		if msg.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, msg.Error)
		}
		return msg.Result, nil
	}
}

func (s *stdio) tool(name string, args any) error {
	res, err := s.call("tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return err
	}
	if bytes.Contains(res, []byte(`"isError":true`)) {
		return fmt.Errorf("%s: %.300s", name, res)
	}
	return nil
}

func (s *stdio) close() error {
	s.in.Close()
	return s.cmd.Wait()
}

func overStdio(bin, db string, texts []string, f figures) error {
	s, err := startStdio(bin, db)
	if err != nil {
		return err
	}
	start := time.Now()
	for i := 0; i < len(texts); i += 200 {
		var items []map[string]any
		for _, t := range texts[i:min(i+200, len(texts))] {
			items = append(items, map[string]any{"text": t})
		}
		if err := s.tool("remember_batch", map[string]any{"items": items}); err != nil {
			s.close()
			return fmt.Errorf("load at %d: %w", i, err)
		}
		if i%20000 == 0 && i > 0 {
			fmt.Fprintf(os.Stderr, "perfgoals: loaded %d in %s\n", i, time.Since(start).Round(time.Second))
		}
	}
	f["load"] = float64(len(texts)) / time.Since(start).Seconds()
	const ones = 1000
	start = time.Now()
	for i := range ones {
		if err := s.tool("remember", map[string]any{"text": fmt.Sprintf("one at a time %d: the cello lesson moved to Thursday %d", i, i*7)}); err != nil {
			s.close()
			return err
		}
	}
	f["remember1"] = ones / time.Since(start).Seconds()
	return s.close()
}

func overHTTP(bin, db string, f figures) error {
	tokens, err := serving.Tokens(bin, db, "perf", 16)
	if err != nil {
		return err
	}
	start := time.Now()
	cmd := exec.Command(bin, "serve", "--db", db, "--addr", "127.0.0.1:0", "--rate-limit", "0", "--log-level", "info")
	cmd.Env = append(os.Environ(), "OWNSONA_LOGIN_PASSWORD=perfgoals-password")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	url, err := serving.Wait(stderr, time.Minute)
	if err != nil {
		return err
	}
	go io.Copy(io.Discard, stderr)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}
	c := client{hc: hc, url: url, token: tokens[0]}
	if _, err := c.tool("recall", map[string]any{"query": "what does she like to paint"}); err != nil {
		return fmt.Errorf("first recall: %w", err)
	}
	f["startup"] = float64(time.Since(start).Milliseconds())
	health := strings.TrimSuffix(url, "/mcp") + "/health"

	// While the graph builds: recall, one client, until /health says it is done (at most 2 min).
	var during []time.Duration
	deadline := time.Now().Add(2 * time.Minute)
	for i := 0; time.Now().Before(deadline); i++ {
		if i%20 == 0 && !building(hc, health) {
			break
		}
		d, err := c.tool("recall", map[string]any{"query": queries[i%len(queries)]})
		if err != nil {
			return err
		}
		during = append(during, d)
	}
	if building(hc, health) {
		return errors.New("the graph was still building 2 min after start")
	}
	f["buildSecs"] = time.Since(start).Seconds()
	if len(during) >= 10 {
		f["buildP50"] = ms(pct(during, 0.5))
	}
	var lat []time.Duration
	for i := range 500 {
		d, err := c.tool("recall", map[string]any{"query": queries[i%len(queries)]})
		if err != nil {
			return err
		}
		lat = append(lat, d)
	}
	f["recallP50"], f["recallP99"] = ms(pct(lat, 0.5)), ms(pct(lat, 0.99))
	f["rss"] = rss(cmd.Process.Pid)
	// A personal server is idle most of the time: what it holds then, a little over two of
	// the server's idle periods (5 s) after the last call.
	time.Sleep(12 * time.Second)
	f["rssRest"] = rss(cmd.Process.Pid)

	rate := func(clients int, d time.Duration) (float64, error) {
		var done atomic.Int64
		var firstErr atomic.Value
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		var wg sync.WaitGroup
		for i := range clients {
			wg.Go(func() {
				c := client{hc: hc, url: url, token: tokens[i]}
				for n := 0; ctx.Err() == nil; n++ {
					_, err := c.tool("remember", map[string]any{"text": fmt.Sprintf("client %d of %d remembers note %d: the tram to the lake leaves at %d", i, clients, n, n%60)})
					if err != nil {
						if ctx.Err() == nil {
							firstErr.CompareAndSwap(nil, err)
						}
						return
					}
					done.Add(1)
				}
			})
		}
		wg.Wait()
		if e, _ := firstErr.Load().(error); e != nil {
			return 0, e
		}
		return float64(done.Load()) / d.Seconds(), nil
	}
	if f["rememberHTTP1"], err = rate(1, 5*time.Second); err != nil {
		return err
	}
	if f["rememberHTTP16"], err = rate(16, 5*time.Second); err != nil {
		return err
	}
	return nil
}

var queries = []string{"what does she like to paint", "when did he go camping", "who went to the support group",
	"what book did she recommend", "where did they travel last summer", "what instrument does he play",
	"how many kids does she have", "what did they do for the birthday", "why did he change jobs", "pets"}

type client struct {
	hc         *http.Client
	url, token string
}

// tool calls a tool and returns how long the answer took.
func (c client) tool(name string, args any) (time.Duration, error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	d := time.Since(start)
	switch {
	case err != nil:
		return 0, err
	case resp.StatusCode != http.StatusOK:
		return 0, fmt.Errorf("%s: status %d: %.300s", name, resp.StatusCode, b)
	case bytes.Contains(b, []byte(`"isError":true`)) || bytes.Contains(b, []byte(`"error":{`)):
		return 0, fmt.Errorf("%s: %.300s", name, b)
	}
	return d, nil
}

func building(hc *http.Client, health string) bool {
	resp, err := hc.Get(health)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return bytes.Contains(b, []byte(`"index":"building"`))
}

// rss is a process's resident set in MiB, from /proc (0 where there is none).
func rss(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func pct(l []time.Duration, q float64) time.Duration {
	l = slices.Clone(l)
	slices.Sort(l)
	return l[min(len(l)-1, int(q*float64(len(l))))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
