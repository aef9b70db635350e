package rpc

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
)

// ServeHTTP is the Streamable HTTP endpoint (POST with JSON responses). GET and DELETE answer
// 405 until the server-push stream exists; authentication is the caller's middleware.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeHTTP(w, http.StatusMethodNotAllowed, marshal(errorResponse(nil, invalidRequest("use POST; this endpoint offers no server-sent event stream"))))
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeHTTP(w, http.StatusUnsupportedMediaType, marshal(errorResponse(nil, invalidRequest("Content-Type must be application/json"))))
		return
	}
	version := r.Header.Get("MCP-Protocol-Version")
	if version != "" && !slices.Contains(SupportedProtocolVersions, version) {
		writeHTTP(w, http.StatusBadRequest, marshal(errorResponse(nil, &Error{Code: CodeInvalidRequest,
			Message: "unsupported MCP-Protocol-Version " + version, Data: map[string]any{"supported": SupportedProtocolVersions}})))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxMessage))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeHTTP(w, http.StatusRequestEntityTooLarge, marshal(errorResponse(nil, invalidRequest("request body too large: the limit is 4 MiB"))))
			return
		}
		writeHTTP(w, http.StatusBadRequest, marshal(errorResponse(nil, invalidRequest("could not read the request body"))))
		return
	}
	ss := &session{transport: "http", header: version}
	resp, out := s.process(r.Context(), ss, body)
	switch out {
	case outNoContent:
		if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			w.WriteHeader(http.StatusAccepted)
		} else {
			w.WriteHeader(http.StatusNoContent)
		}
	case outBad:
		writeHTTP(w, http.StatusBadRequest, resp)
	default:
		writeHTTP(w, http.StatusOK, resp)
	}
}

func writeHTTP(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}
