// Command loadtest is `make load`: a bounded load test of the real binary over HTTPS on
// loopback. It starts `ownsona serve --tls local` on a fresh file, gives each of N clients its
// own personal access token, and has them remember and recall as fast as the server lets them
// first alone (the baseline), then for a fixed time while hostile connections send headers one
// byte at a time (slowloris), bodies over the 4 MiB limit, and the headers of OAuth token
// requests whose bodies never finish (slow bodies). Then it stops the server, exports the file
// and checks that every acknowledged write is there. It prints throughput, latency
// percentiles and the count of each outcome for both runs, and the ratio of the attacked p99
// to the baseline's; it exits 1 on any error other than the intended 429s, on a lost write, or
// when that ratio exceeds -max-p99-ratio.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
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

	"github.com/ownsona/ownsona/internal/serving"
)

func main() {
	bin := flag.String("bin", "bin/ownsona", "the ownsona binary")
	clients := flag.Int("clients", 50, "concurrent clients")
	duration := flag.Duration("duration", 60*time.Second, "how long the clients run")
	rate := flag.Int("rate", 600, "OWNSONA_RATE_LIMIT for the server (requests per minute per client)")
	hostile := flag.Int("hostile", 4, "slowloris connections, oversized-body and slow-body senders (each)")
	maxRatio := flag.Float64("max-p99-ratio", 2, "the most the attacked p99 may be of the baseline's (0: report only)")
	flag.Parse()
	if err := run(*bin, *clients, *duration, *rate, *hostile, *maxRatio); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

type result struct {
	kind    string // remember or recall
	status  int    // HTTP status; 0 on a transport error
	latency time.Duration
	err     string
}

func run(bin string, clients int, duration time.Duration, rate, hostile int, maxRatio float64) error {
	dir, err := os.MkdirTemp("", "ownsona-load")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db := filepath.Join(dir, "load.db")
	env := append(os.Environ(), "OWNSONA_LOGIN_PASSWORD=load-test-password", "OWNSONA_LOG_LEVEL=warn")

	// ca export makes the file (the local CA's root in it); token create needs one to exist.
	rootPEM, err := exec.Command(bin, "ca", "export", "--db", db).Output()
	if err != nil {
		return fmt.Errorf("ca export: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(rootPEM) {
		return errors.New("ca export printed no certificate")
	}

	tokens, err := serving.Tokens(bin, db, "load", clients)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "serve", "--db", db, "--addr", "127.0.0.1:0", "--tls", "local",
		"--rate-limit", strconv.Itoa(rate), "--rate-burst", "20", "--log-level", "info")
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	url, err := serving.Wait(stderr, 30*time.Second)
	if err != nil {
		return err
	}
	go io.Copy(io.Discard, stderr)
	host := strings.TrimSuffix(strings.TrimPrefix(url, "https://"), "/mcp")
	fmt.Printf("serving at %s; %d clients for %s alone, then for %s beside %d slowloris, %d oversized-body and %d slow-body senders\n",
		url, clients, duration/2, duration, hostile, hostile, hostile)

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, MaxIdleConnsPerHost: clients * 2}
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	acked := map[string]bool{}
	baseline := phase(hc, url, host, tokens, duration/2, 0, acked, nil)
	var hostileErr atomic.Value
	attacked := phase(hc, url, host, tokens, duration, hostile, acked, &hostileErr)

	// Stop the server and read the file back.
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		stopped = true
		if err != nil {
			return fmt.Errorf("serve exited with %v", err)
		}
	case <-time.After(30 * time.Second):
		return errors.New("serve did not stop within 30 s of SIGINT")
	}
	out, err := exec.Command(bin, "export", "--db", db).Output()
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	stored := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Text != "" {
			stored[m.Text] = true
		}
	}
	lost := 0
	for t := range acked {
		if !stored[t] {
			lost++
		}
	}
	fmt.Printf("\nbaseline (%s, no attackers):", duration/2)
	baseP99, baseErr := report(baseline, duration/2)
	fmt.Printf("\nunder attack (%s):", duration)
	attackP99, attackErr := report(attacked, duration)
	ratio := float64(attackP99) / float64(max(baseP99, time.Microsecond))
	fmt.Printf("\nauthenticated p99: %s alone, %s under attack: %.2f×\nacknowledged writes: %d, missing after restart: %d\n",
		baseP99.Round(10*time.Microsecond), attackP99.Round(10*time.Microsecond), ratio, len(acked), lost)
	var problems []string
	for _, err := range []error{baseErr, attackErr} {
		if err != nil {
			problems = append(problems, err.Error())
		}
	}
	if lost > 0 {
		problems = append(problems, fmt.Sprintf("%d acknowledged writes lost", lost))
	}
	if e := hostileErr.Load(); e != nil {
		problems = append(problems, fmt.Sprint(e))
	}
	if maxRatio > 0 && ratio > maxRatio {
		problems = append(problems, fmt.Sprintf("the attacked p99 is %.2f× the baseline's, more than %.1f×", ratio, maxRatio))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	fmt.Println("ok: no errors but the intended 429s, no acknowledged write lost")
	return nil
}

// phase runs the clients for d, with hostile senders of each kind beside them, and returns
// their results; the writes the server acknowledged join acked.
func phase(hc *http.Client, url, host string, tokens []string, d time.Duration, hostile int, acked map[string]bool, hostileErr *atomic.Value) []result {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var mu sync.Mutex
	var results []result
	var wg sync.WaitGroup
	start := len(acked)
	for i := range tokens {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var mine []result
			var myAcks []string
			for n := 0; ctx.Err() == nil; n++ {
				kind := "recall"
				args := map[string]any{"query": fmt.Sprintf("what did client %d say about item %d", i, n/2)}
				text := ""
				if n%2 == 0 {
					kind = "remember"
					text = fmt.Sprintf("load client %d remembers item %d (after %d): the cello lesson moved to Thursday", i, n, start)
					args = map[string]any{"text": text, "tags": []string{"load"}}
				}
				r, retry := call(ctx, hc, url, tokens[i], kind, args)
				if ctx.Err() != nil && r.status == 0 {
					break // the run ended during the request: not an error
				}
				mine = append(mine, r)
				if r.status == http.StatusOK && r.err == "" && kind == "remember" {
					myAcks = append(myAcks, text)
				}
				if r.status == http.StatusTooManyRequests {
					select {
					case <-time.After(retry):
					case <-ctx.Done():
					}
				}
			}
			mu.Lock()
			results = append(results, mine...)
			for _, t := range myAcks {
				acked[t] = true
			}
			mu.Unlock()
		}(i)
	}
	for range hostile {
		wg.Add(3)
		go func() { defer wg.Done(); slowloris(ctx, host) }()
		go func() { defer wg.Done(); slowBody(ctx, host) }()
		go func() {
			defer wg.Done()
			if err := oversized(ctx, hc, url, tokens[0]); err != nil {
				hostileErr.Store(err.Error())
			}
		}()
	}
	wg.Wait()
	return results
}

// call sends one tools/call and classifies the answer; for a 429 it returns the wait.
func call(ctx context.Context, hc *http.Client, url, token, tool string, args map[string]any) (result, time.Duration) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	start := time.Now()
	resp, err := hc.Do(req)
	r := result{kind: tool, latency: time.Since(start)}
	if err != nil {
		r.err = err.Error()
		return r, 0
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	r.latency = time.Since(start)
	r.status = resp.StatusCode
	switch {
	case err != nil:
		r.err = err.Error()
	case resp.StatusCode == http.StatusTooManyRequests:
		s, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		if !bytes.Contains(b, []byte(`-32004`)) {
			r.err = "429 without JSON-RPC error -32004"
		}
		return r, time.Duration(max(s, 1)) * time.Second
	case resp.StatusCode != http.StatusOK:
		r.err = fmt.Sprintf("status %d: %.200s", resp.StatusCode, b)
	case bytes.Contains(b, []byte(`"isError":true`)) || bytes.Contains(b, []byte(`"error":{`)):
		r.err = fmt.Sprintf("error result: %.200s", b)
	}
	return r, 0
}

// slowloris holds connections open by sending a header byte every few seconds.
func slowloris(ctx context.Context, host string) {
	for ctx.Err() == nil {
		conn, err := tls.Dial("tcp", host, &tls.Config{InsecureSkipVerify: true}) // the attacker does not care
		if err != nil {
			return
		}
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\n", host)
		for ctx.Err() == nil {
			if _, err := conn.Write([]byte("X")); err != nil {
				break // the server's ReadHeaderTimeout cut it: reconnect
			}
			select {
			case <-time.After(2 * time.Second):
			case <-ctx.Done():
			}
		}
		conn.Close()
	}
}

// slowBody sends the headers of OAuth token requests and then their bodies one byte a second,
// on 8 connections at once, reconnecting when the server cuts one: what held every slot of
// the server's one concurrency gate before authenticated MCP got a pool of its own.
func slowBody(ctx context.Context, host string) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for ctx.Err() == nil {
				conn, err := tls.Dial("tcp", host, &tls.Config{InsecureSkipVerify: true})
				if err != nil {
					return
				}
				fmt.Fprintf(conn, "POST /oauth/token HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n", host)
				for ctx.Err() == nil {
					if _, err := conn.Write([]byte("x")); err != nil {
						break // cut, or answered and closed: reconnect
					}
					select {
					case <-time.After(time.Second):
					case <-ctx.Done():
					}
				}
				conn.Close()
				select {
				case <-time.After(100 * time.Millisecond):
				case <-ctx.Done():
				}
			}
		})
	}
	wg.Wait()
}

// oversized posts bodies over the 4 MiB limit and expects 413 each time.
func oversized(ctx context.Context, hc *http.Client, url, token string) error {
	big := bytes.Repeat([]byte("a"), 5<<20)
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(big))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err == nil { // an error is the server closing the connection after refusing the body
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge && resp.StatusCode != http.StatusTooManyRequests {
				return fmt.Errorf("a 5 MiB body got %d, want 413", resp.StatusCode)
			}
		}
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	return nil
}

// report prints one run's table and returns the p99 of its successful calls and its error
// (requests that failed otherwise than with the intended 429).
func report(results []result, d time.Duration) (time.Duration, error) {
	count := map[string]int{}
	var lat = map[string][]time.Duration{}
	var all []time.Duration
	var errs []string
	for _, r := range results {
		switch {
		case r.status == http.StatusTooManyRequests && r.err == "":
			count[r.kind+" 429"]++
		case r.err != "":
			count[r.kind+" error"]++
			if len(errs) < 5 {
				errs = append(errs, r.kind+": "+r.err)
			}
		default:
			count[r.kind+" ok"]++
			lat[r.kind] = append(lat[r.kind], r.latency)
			all = append(all, r.latency)
		}
	}
	pct := func(l []time.Duration, q float64) time.Duration {
		if len(l) == 0 {
			return 0
		}
		slices.Sort(l)
		return l[min(len(l)-1, int(q*float64(len(l))))]
	}
	fmt.Printf("\n| operation | ok | 429 | errors | ok/s | p50 | p99 |\n|---|---|---|---|---|---|---|\n")
	for _, k := range []string{"remember", "recall"} {
		l := lat[k]
		fmt.Printf("| %s | %d | %d | %d | %.0f | %s | %s |\n", k, count[k+" ok"], count[k+" 429"], count[k+" error"],
			float64(count[k+" ok"])/d.Seconds(), pct(l, 0.5).Round(10*time.Microsecond), pct(l, 0.99).Round(10*time.Microsecond))
	}
	var problems []string
	if n := count["remember error"] + count["recall error"]; n > 0 {
		problems = append(problems, fmt.Sprintf("%d errors, e.g. %s", n, strings.Join(errs, "; ")))
	}
	if count["remember ok"] == 0 || count["recall ok"] == 0 {
		problems = append(problems, "no successful requests")
	}
	if len(problems) > 0 {
		return pct(all, 0.99), errors.New(strings.Join(problems, "; "))
	}
	return pct(all, 0.99), nil
}
