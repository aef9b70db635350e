// Package serving is what the tools that drive a real `ownsona serve` (cmd/loadtest,
// cmd/perfgoals) share: personal access tokens for their clients, and waiting until
// it serves.
package serving

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// Wait reads the server's JSON log from stderr until it says where it serves MCP over HTTP and
// returns that URL; an error if the log ends first or nothing is said within timeout. The caller
// keeps draining stderr afterwards (the server blocks on a full pipe).
func Wait(stderr io.Reader, timeout time.Duration) (string, error) {
	sc := bufio.NewScanner(stderr)
	found := make(chan string, 1)
	go func() {
		for sc.Scan() {
			var line struct {
				Message string `json:"message"`
				URL     string `json:"url"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Message == "serving MCP" {
				found <- line.URL
				return
			}
		}
		close(found)
	}()
	select {
	case u, ok := <-found:
		if !ok {
			return "", errors.New("serve exited before serving")
		}
		return u, nil
	case <-time.After(timeout):
		return "", fmt.Errorf("serve did not start within %s", timeout)
	}
}

// Tokens creates n personal access tokens named prefix-0 … prefix-(n-1) in the file db with the
// binary bin (`ownsona token create`), and returns them.
func Tokens(bin, db, prefix string, n int) ([]string, error) {
	tokens := make([]string, n)
	for i := range tokens {
		out, err := exec.Command(bin, "token", "create", "--db", db, "--name", fmt.Sprintf("%s-%d", prefix, i)).Output()
		if err != nil {
			return nil, fmt.Errorf("token create: %w", err)
		}
		for f := range strings.FieldsSeq(string(out)) {
			if strings.HasPrefix(f, "osk_") {
				tokens[i] = f
				break
			}
		}
		if tokens[i] == "" {
			return nil, fmt.Errorf("token create printed no osk_ token: %q", out)
		}
	}
	return tokens, nil
}
