package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestLoopbackHost(t *testing.T) {
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"localhost", true}, {"LOCALHOST:3000", true}, {"127.0.0.1", true}, {"127.0.0.1:8080", true},
		{"[::1]", true}, {"[::1]:8080", true},
		{"evil.example.com", false}, {"evil.example.com:80", false}, {"127.0.0.2", false},
		{"localhost.evil.example.com", false}, {"0.0.0.0:80", false}, {"", false}, {"[::2]:80", false},
	} {
		if got := loopbackHost(tc.host); got != tc.want {
			t.Errorf("loopbackHost(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}

// TestRun serves the fixture and checks the DNS-rebinding guard and a tool call end to end.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-port", "0"}, pw, io.Discard); pw.Close() }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	url := strings.TrimSpace(line)

	post := func(host, origin, body string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_simple_text"}}`
	for _, tc := range []struct {
		name, host, origin string
		status             int
	}{
		{"loopback", "", "", 200},
		{"localhost with an origin", "localhost:1234", "http://localhost:1234", 200},
		{"foreign host", "evil.example.com", "http://evil.example.com", 421},
		{"foreign origin", "", "http://evil.example.com", 403},
		{"opaque origin", "", "null", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(tc.host, tc.origin, call)
			if status != tc.status {
				t.Errorf("status %d, want %d: %s", status, tc.status, body)
			}
			if status == 200 && !strings.Contains(body, "This is a simple text response for testing.") {
				t.Errorf("body %s", body)
			}
		})
	}
	_, body := post("", "", `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://template/42/data"}}`)
	if want := `"text":"{\"data\":\"Data for ID: 42\",\"id\":\"42\",\"templateTest\":true}"`; !strings.Contains(body, want) {
		t.Errorf("template read: %s, want %s in it", body, want)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
}
