// Package serving is what the tools that drive a real `ownsona serve` (app/internal/loadtest,
// app/internal/perfgoals) share: waiting until it serves.
package serving

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Message == "serving MCP over HTTP" {
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
