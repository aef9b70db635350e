package rpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
)

// maxMessage caps one message: a stdio line or an HTTP body.
const maxMessage = 4 << 20

// stdioConcurrency bounds the requests handled at once on stdio, so that a cancellation can
// overtake the request it cancels.
const stdioConcurrency = 8

// ServeStdio serves newline-delimited JSON-RPC messages from in, writing each response as one
// line to out (and nothing else), until in ends (after in-flight requests finish) or ctx is done.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wmu sync.Mutex
	write := func(b []byte) {
		wmu.Lock()
		defer wmu.Unlock()
		out.Write(append(b, '\n'))
	}
	ss := &session{transport: "stdio", notify: write}
	sem := make(chan struct{}, stdioConcurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	r := bufio.NewReaderSize(in, 64<<10)
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		for {
			line, err := readLine(r)
			if errors.Is(err, errTooLong) {
				line = nil
			} else if err != nil {
				readErr <- err
				return
			}
			select {
			case lines <- line:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case line, ok := <-lines:
			if !ok {
				wg.Wait()
				if err := <-readErr; !errors.Is(err, io.EOF) {
					return err
				}
				return nil
			}
			if line == nil {
				write(marshal(errorResponse(nil, invalidRequest("message too large: the limit is 4 MiB"))))
				continue
			}
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				if resp, _ := s.process(ctx, ss, line); resp != nil {
					write(resp)
				}
			}()
		}
	}
}

var errTooLong = errors.New("line too long")

// readLine reads one line of at most maxMessage bytes; a longer line is consumed and reported
// as errTooLong. The last line may lack its newline.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > maxMessage+1 {
				tooLong, line = true, nil
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, errTooLong
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0 && !tooLong:
			return line, nil
		default:
			if tooLong && errors.Is(err, io.EOF) {
				return nil, errTooLong
			}
			return nil, err
		}
	}
}
