package web

// The upload route of large imports: POST <public origin>/mcp/upload/<id> with the one-time
// token that prepare_import_upload gave out. The upload token is the request's credential (no
// access token is needed, and none is accepted); the file is the raw body (curl
// --data-binary @FILE) or the form field "file" of a multipart body (curl -F file=@FILE).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/ownsona/ownsona/oauth"
)

// UploadPath is where the upload URLs live: UploadPath + the upload's id.
const UploadPath = "/mcp/upload/"

// uploadTimeout is how long an upload's body may take to arrive (the server's read timeout
// of other requests is a minute; 64 MiB over a slow uplink needs more).
const uploadTimeout = 10 * time.Minute

// multipartSlack is what a multipart body may hold besides the file: boundaries and headers.
const multipartSlack = 64 << 10

// UploadReceiver takes the files posted to upload URLs (app/uploads). Its refusals carry a
// code (RefusalCode) that uploadStatus maps to an HTTP status.
type UploadReceiver interface {
	// Check tells whether token opens the upload URL of id, without spending it, and the most
	// bytes the file may have.
	Check(id, token string) (maxBytes int64, err error)
	// Receive spends the token and starts importing body; result is the import as it starts.
	Receive(id, token string, body []byte) (result any, err error)
}

// uploadStatus maps the codes of UploadReceiver's refusals to HTTP statuses; an unknown one
// is 400.
var uploadStatus = map[string]int{
	"invalid_upload_token":      http.StatusUnauthorized,
	"access_token_not_accepted": http.StatusUnauthorized,
	"upload_token_used":         http.StatusUnauthorized,
	"upload_token_expired":      http.StatusUnauthorized,
	"wrong_upload_url":          http.StatusForbidden,
	"imports_busy":              http.StatusTooManyRequests,
	"empty_upload":              http.StatusBadRequest,
	"uploads_unavailable":       http.StatusServiceUnavailable,
}

func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, UploadPath)
	if id == "" || strings.Contains(id, "/") {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not_found", "error_description": "no such upload URL; prepare_import_upload gives one"})
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
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
	maxBytes, err := s.cfg.Uploads.Check(id, tok)
	if err != nil {
		s.refuseUpload(w, r, err)
		return
	}
	if r.ContentLength > maxBytes {
		refuseBody(w)
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "upload_too_large", "max_bytes": maxBytes,
			"error_description": fmt.Sprintf("the file is %d bytes; an upload may have at most %d bytes (max_bytes); the token stays valid", r.ContentLength, maxBytes)})
		return
	}
	// The token is good: the body may take its time (the gate gave it five seconds).
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(uploadTimeout))
	_ = rc.SetWriteDeadline(time.Now().Add(uploadTimeout + time.Minute))
	body, err := readUpload(w, r, maxBytes)
	if err != nil {
		var tl *tooLarge
		if errors.As(err, &tl) {
			refuseBody(w)
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "upload_too_large", "max_bytes": maxBytes,
				"error_description": fmt.Sprintf("the file is larger than %d bytes, the most an upload may have (max_bytes); the token stays valid", maxBytes)})
			return
		}
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_upload", "error_description": "could not read the upload: " + err.Error()})
		return
	}
	job, err := s.cfg.Uploads.Receive(id, tok, body)
	if err != nil {
		s.refuseUpload(w, r, err)
		return
	}
	s.log.Info().Str("upload", id).Int("bytes", len(body)).Str("ip", s.clientIP(r)).Msg("upload received")
	writeJSON(w, http.StatusAccepted, map[string]any{"ok": true, "import": job,
		"message": "received; the import runs in the background: call import_status with this id to follow it"})
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
// body, else the raw body; at most maxBytes of it.
func readUpload(w http.ResponseWriter, r *http.Request, maxBytes int64) ([]byte, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		return readCapped(r.Body, maxBytes, r.ContentLength)
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
		b, err := readCapped(part, maxBytes, -1)
		part.Close()
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &tooLarge{}
		}
		return b, err
	}
}

// readCapped reads all of rd, failing with *tooLarge past maxBytes; size, when known, sizes
// the buffer once.
func readCapped(rd io.Reader, maxBytes, size int64) ([]byte, error) {
	var buf bytes.Buffer
	if size > 0 && size <= maxBytes {
		buf.Grow(int(size) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(io.LimitReader(rd, maxBytes+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > maxBytes {
		return nil, &tooLarge{}
	}
	return buf.Bytes(), nil
}
