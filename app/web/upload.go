package web

// The upload route of large imports: POST <public origin>/mcp/upload/<id> with the one-time
// token that prepare_import_upload gave out. The upload token is the request's credential (no
// access token is needed, and none is accepted); the file is the raw body (curl
// --data-binary @FILE) or the form field "file" of a multipart body (curl -F file=@FILE).
//
// What one upload may hold (SECURITY.md UP-02): its URL, for one transfer at a time; a slot of
// the uploads' own pool (maxUploads), never one the OAuth endpoints, sign-in or the console
// need; memory for what has arrived, never for what Content-Length announces; and its
// connection only while the body keeps arriving at uploadMinRate or faster.

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ownsona/ownsona/oauth"
)

// UploadPath is where the upload URLs live: UploadPath + the upload's id.
const UploadPath = "/mcp/upload/"

const (
	// maxUploads is how many upload bodies are read at once, in a pool of their own: as many
	// as imports may run at once (app/uploads), each holding its file in memory.
	maxUploads = 2
	// uploadMinRate is the slowest an upload's body may arrive, in bytes per second, averaged
	// over each uploadWindow once uploadGrace has passed: a transfer that falls below it is
	// cut (408), so a stalled one frees its slot within uploadGrace + uploadWindow. 64 MiB at
	// the minimum takes 68 minutes.
	uploadMinRate = 16 << 10
	uploadWindow  = 30 * time.Second
	uploadGrace   = 30 * time.Second
	// uploadWriteSlack is how long after the body's read deadline the answer may take.
	uploadWriteSlack = time.Minute
)

// multipartSlack is what a multipart body may hold besides the file: boundaries and headers.
const multipartSlack = 64 << 10

// uploadRate is the minimum rate of upload bodies: at least perWindow bytes in each window,
// the first of which starts after grace. Server.uploadRate is it; tests shorten it.
type uploadRate struct {
	perWindow     int64
	window, grace time.Duration
}

var defaultUploadRate = uploadRate{perWindow: uploadMinRate * int64(uploadWindow/time.Second), window: uploadWindow, grace: uploadGrace}

// UploadReceiver takes the files posted to upload URLs (app/uploads). Its refusals carry a
// code (RefusalCode) that uploadStatus maps to an HTTP status.
type UploadReceiver interface {
	// Begin claims the upload URL of id for one transfer if token opens it, without spending
	// the token: the most bytes the file may have, and the function that ends the transfer
	// (serveUpload calls it once the body is handed over or refused). While a transfer holds
	// the URL, another is refused with the code "upload_in_progress".
	Begin(id, token string) (maxBytes int64, end func(), err error)
	// Receive spends the token and starts importing body, the file in pieces in the order
	// they arrived (the receiver owns them); result is the import as it starts.
	Receive(id, token string, body [][]byte) (result any, err error)
}

// uploadStatus maps the codes of UploadReceiver's refusals to HTTP statuses; an unknown one
// is 400.
var uploadStatus = map[string]int{
	"invalid_upload_token":      http.StatusUnauthorized,
	"access_token_not_accepted": http.StatusUnauthorized,
	"upload_token_used":         http.StatusUnauthorized,
	"upload_token_expired":      http.StatusUnauthorized,
	"wrong_upload_url":          http.StatusForbidden,
	"upload_in_progress":        http.StatusConflict,
	"imports_busy":              http.StatusTooManyRequests,
	"empty_upload":              http.StatusBadRequest,
	"uploads_unavailable":       http.StatusServiceUnavailable,
}

func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, UploadPath)
	if id == "" || strings.Contains(id, "/") {
		refuseBody(w)
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not_found", "error_description": "no such upload URL; prepare_import_upload gives one"})
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		refuseBody(w)
		w.Header().Set("Allow", "POST, PUT")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method_not_allowed", "error_description": "POST the file to this URL"})
		return
	}
	tok, ok, err := oauth.BearerToken(r)
	if err != nil || !ok {
		refuseBody(w)
		w.Header().Set("WWW-Authenticate", `Bearer realm="ownsona upload"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "upload_token_required",
			"error_description": "send the upload_token that prepare_import_upload returned as \"Authorization: Bearer <upload_token>\""})
		return
	}
	maxBytes, end, err := s.cfg.Uploads.Begin(id, tok)
	if err != nil {
		s.refuseUpload(w, r, err)
		return
	}
	defer end()
	if r.ContentLength > maxBytes {
		refuseBody(w)
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "upload_too_large", "max_bytes": maxBytes,
			"error_description": fmt.Sprintf("the file is %d bytes; an upload may have at most %d bytes (max_bytes); the token stays valid", r.ContentLength, maxBytes)})
		return
	}
	if !s.pools.uploads.TryAcquire() {
		refuseBody(w)
		w.Header().Set("Retry-After", "10")
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "uploads_busy",
			"error_description": fmt.Sprintf("the server receives %d uploads at once, the most it takes; retry in a few seconds (the token stays valid)", maxUploads)})
		return
	}
	defer s.pools.uploads.Release()
	// The token is good: the body may take its time, as long as it keeps coming.
	body := newRateBody(r.Body, connDeadlines(w), s.uploadRate, time.Now)
	r.Body = body
	file, err := readUpload(w, r, maxBytes)
	if err != nil {
		var tl *tooLarge
		switch {
		case errors.As(err, &tl):
			refuseBody(w)
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "upload_too_large", "max_bytes": maxBytes,
				"error_description": fmt.Sprintf("the file is larger than %d bytes, the most an upload may have (max_bytes); the token stays valid", maxBytes)})
		case body.cut:
			s.log.Info().Str("upload", id).Int64("bytes", body.total).Str("ip", s.clientIP(r)).Msg("upload too slow: cut")
			refuseBody(w)
			writeJSON(w, http.StatusRequestTimeout, map[string]any{"error": "upload_too_slow", "bytes_received": body.total,
				"error_description": fmt.Sprintf("the file arrived slower than %d KiB/s over %s, the least an upload must keep (a stalled one holds a slot other uploads need); the token stays valid: send the file again",
					s.uploadRate.perWindow*int64(time.Second)/int64(s.uploadRate.window)>>10, s.uploadRate.window)})
		default:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_upload", "error_description": "could not read the upload: " + err.Error()})
		}
		return
	}
	size := 0
	for _, b := range file {
		size += len(b)
	}
	job, err := s.cfg.Uploads.Receive(id, tok, file)
	if err != nil {
		s.refuseUpload(w, r, err)
		return
	}
	s.log.Info().Str("upload", id).Int("bytes", size).Str("ip", s.clientIP(r)).Msg("upload received")
	writeJSON(w, http.StatusAccepted, map[string]any{"ok": true, "import": job,
		"message": "received; the import runs in the background: call import_status with this id to follow it"})
}

// rateBody is an upload's body held to a minimum rate: the read deadline it sets (through
// setDeadline) is window after the last window filled, grace + window after the start, so a
// body that sends less than perWindow bytes in a window is cut there; cut tells that it was.
type rateBody struct {
	io.ReadCloser
	setDeadline func(time.Time)
	rate        uploadRate
	now         func() time.Time
	got         int64 // in the current window
	total       int64
	cut         bool
}

func newRateBody(body io.ReadCloser, setDeadline func(time.Time), rate uploadRate, now func() time.Time) *rateBody {
	b := &rateBody{ReadCloser: body, setDeadline: setDeadline, rate: rate, now: now}
	b.setDeadline(now().Add(rate.grace + rate.window))
	return b
}

func (b *rateBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.got += int64(n)
	b.total += int64(n)
	if b.got >= b.rate.perWindow {
		b.got = 0
		b.setDeadline(b.now().Add(b.rate.window))
	}
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		b.cut = true
	}
	return n, err
}

// connDeadlines sets the read deadline of w's connection, and its write deadline
// uploadWriteSlack later; skipped where w does not support them (test recorders).
func connDeadlines(w http.ResponseWriter) func(time.Time) {
	rc := http.NewResponseController(w)
	return func(t time.Time) {
		_ = rc.SetReadDeadline(t)
		_ = rc.SetWriteDeadline(t.Add(uploadWriteSlack))
	}
}

// refuseUpload answers a refusal of the upload receiver.
func (s *Server) refuseUpload(w http.ResponseWriter, r *http.Request, err error) {
	var coded interface{ RefusalCode() string }
	if !errors.As(err, &coded) {
		s.log.Error().Err(err).Msg("upload failed")
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error", "error_description": "internal error"})
		return
	}
	code := coded.RefusalCode()
	status, ok := uploadStatus[code]
	if !ok {
		status = http.StatusBadRequest
	}
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="ownsona upload", error="invalid_token", error_description=%q`, err.Error()))
		s.log.Info().Str("ip", s.clientIP(r)).Str("error", code).Msg("upload refused")
	case http.StatusTooManyRequests:
		w.Header().Set("Retry-After", "60")
	}
	refuseBody(w)
	writeJSON(w, status, map[string]string{"error": code, "error_description": err.Error()})
}

// tooLarge is a body past the upload's cap.
type tooLarge struct{}

func (*tooLarge) Error() string { return "too large" }

// readUpload reads the file of r: the form field "file" (or the first file) of a multipart
// body, else the raw body; at most maxBytes of it, in pieces (readCapped).
func readUpload(w http.ResponseWriter, r *http.Request, maxBytes int64) ([][]byte, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		return readCapped(r.Body, maxBytes)
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBytes+multipartSlack)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, err
	}
	for {
		part, err := mr.NextPart()
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, &tooLarge{}
			}
			if err == io.EOF {
				return nil, errors.New(`the multipart body has no file: send it as the field "file" (curl -F file=@FILE)`)
			}
			return nil, err
		}
		if part.FormName() != "file" && part.FileName() == "" {
			part.Close()
			continue
		}
		b, err := readCapped(part, maxBytes)
		part.Close()
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &tooLarge{}
		}
		return b, err
	}
}

// Pieces of readCapped: the first is small, each next one twice the last, up to the largest.
const (
	firstPiece = 32 << 10
	maxPiece   = 1 << 20
)

// readCapped reads all of rd in pieces, failing with *tooLarge past maxBytes. Memory grows
// with what arrives, never with what the request announced (SECURITY.md UP-02): a piece is
// made when the last one is full, and no piece reaches past maxBytes + 1, so a body that sends
// its headers and stops holds 32 KiB, and a file of n bytes at most n + 1 MiB.
func readCapped(rd io.Reader, maxBytes int64) ([][]byte, error) {
	var pieces [][]byte
	var total int64
	size := int64(firstPiece)
	for {
		room := maxBytes + 1 - total
		if room <= 0 {
			return nil, &tooLarge{}
		}
		piece := make([]byte, min(size, room))
		size = min(2*size, maxPiece)
		n, err := fill(rd, piece)
		if n > 0 {
			pieces = append(pieces, piece[:n])
			total += int64(n)
		}
		switch {
		case total > maxBytes:
			return nil, &tooLarge{}
		case err == io.EOF:
			return pieces, nil
		case err != nil:
			return nil, err
		}
	}
}

// fill reads rd into p until p is full or rd fails; io.EOF is the end of rd, and any other
// error, io.ErrUnexpectedEOF of a body cut short included, is a failure.
func fill(rd io.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := rd.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
