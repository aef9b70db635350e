// Package s3test starts a real S3-compatible server for tests: the Versity S3 Gateway
// (github.com/versity/versitygw, Apache-2.0) with its posix backend over a temporary
// directory, on loopback. The gateway is built from the Go module proxy with `go install`, once
// per machine, into the user's cache directory (a minute or more cold; seconds after), so that
// it never enters ownsona's go.mod. Tests that use it skip under -short and where no go command
// is found.
package s3test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Version is the gateway's version the tests run.
const Version = "v1.8.0"

// Server is a running gateway.
type Server struct {
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Root      string // the posix backend's directory: a bucket is a directory, an object a file
	cmd       *exec.Cmd
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// gateway returns the gateway's binary, building it on first use.
func gateway(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("builds the versitygw S3 gateway from the module proxy; not with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		tb.Skip("no go command to build the S3 gateway with:", err)
	}
	buildOnce.Do(func() {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		dir := filepath.Join(cache, "ownsona-test", "versitygw-"+Version)
		binary = filepath.Join(dir, "versitygw")
		if _, err := os.Stat(binary); err == nil {
			return
		}
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			buildErr = err
			return
		}
		tmp, err := os.MkdirTemp(filepath.Dir(dir), ".build-*")
		if err != nil {
			buildErr = err
			return
		}
		defer os.RemoveAll(tmp)
		cmd := exec.Command(goBin, "install", "github.com/versity/versitygw/cmd/versitygw@"+Version)
		cmd.Env = append(os.Environ(), "GOBIN="+tmp, "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
		cmd.Dir = tmp // outside ownsona's module
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = errors.New("go install versitygw@" + Version + ": " + err.Error() + "\n" + string(out))
			return
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			buildErr = err
			return
		}
		buildErr = os.Rename(filepath.Join(tmp, "versitygw"), binary)
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binary
}

// Start runs a gateway until the test ends, with the buckets made, and waits until it answers.
func Start(tb testing.TB, buckets ...string) *Server {
	tb.Helper()
	bin := gateway(tb)
	s := &Server{AccessKey: "ownsona-test-access", SecretKey: "ownsona-test-secret-d41d8cd98f00b204", Root: tb.TempDir()}
	for _, b := range buckets {
		if err := os.Mkdir(filepath.Join(s.Root, b), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	addr := freeAddr(tb)
	s.Endpoint = "http://" + addr
	s.cmd = exec.Command(bin, "--port", addr, "--quiet", "posix", s.Root)
	s.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.AccessKey, "ROOT_SECRET_ACCESS_KEY="+s.SecretKey)
	var out bytes.Buffer // what it says, for a failure
	s.cmd.Stdout, s.cmd.Stderr = &out, &out
	if err := s.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			s.Stop()
			tb.Fatalf("versitygw does not answer on %s:\n%s", addr, out.String())
		}
	}
	return s
}

// Stop ends the gateway; requests to it fail from then on (a server that is down).
func (s *Server) Stop() {
	if s.cmd.Process != nil && s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
}

// freeAddr is a loopback address no one listens on, for now.
func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// DownAddr is an http:// endpoint on loopback where no server listens.
func DownAddr(tb testing.TB) string { return "http://" + freeAddr(tb) }
