package rpc

// The Streamable HTTP transport (MCP 2025-11-25, basic/transports), POST with JSON responses
// only: every request is answered in its own HTTP response, so the server keeps no sessions and
// offers no SSE stream yet.

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
)

// ServeHTTP is the Streamable HTTP endpoint. It answers:
//
//   - 405 with Allow: POST for any method but POST (GET and DELETE included: there is no
//     server-sent event stream and there are no sessions to end);
//   - 415 unless Content-Type is application/json (parameters allowed, charset utf-8 only);
//   - 400 for an MCP-Protocol-Version it does not support, with data{requested, supported};
//   - 413 for a body over 4 MiB;
//   - 400 for a parse error or an invalid request (nothing ran);
//   - 200 with the response, also when that response is a JSON-RPC error;
//   - 202 (when Accept lists text/event-stream, as MCP clients' does) or 204 (plain JSON-RPC
//     callers) with no body when the message held only notifications.
//
// Bodies are JSON-RPC, Content-Type application/json. The request's context is the handlers'
// context. It reads no tokens and keeps no sessions: authentication and origin checks are the
// caller's middleware.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, invalidRequest(fmt.Sprintf("method %s is not allowed; POST JSON-RPC messages to this endpoint", r.Method)))
		return
	}
	mt, mp, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, invalidRequest("Content-Type must be application/json"))
		return
	}
	if cs, ok := mp["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		writeError(w, http.StatusUnsupportedMediaType, invalidRequest("the charset must be utf-8"))
		return
	}
	versions := r.Header.Values("MCP-Protocol-Version")
	version := ""
	if len(versions) > 0 {
		version = versions[0]
	}
	if len(versions) > 1 || version != "" && !slices.Contains(SupportedProtocolVersions, version) {
		writeError(w, http.StatusBadRequest, &Error{Code: CodeInvalidRequest, Message: "unsupported protocol version",
			Data: map[string]any{"requested": strings.Join(versions, ", "), "supported": SupportedProtocolVersions}})
		return
	}
	if r.ContentLength > maxMessage {
		writeError(w, http.StatusRequestEntityTooLarge, tooLarge())
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxMessage))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, tooLarge())
			return
		}
		writeError(w, http.StatusBadRequest, invalidRequest("could not read the request body"))
		return
	}
	out, kind := s.handle(r.Context(), &session{transport: "http", header: version}, body)
	switch kind {
	case outNone:
		if acceptsEventStream(r.Header.Values("Accept")) {
			w.WriteHeader(http.StatusAccepted)
		} else {
			w.WriteHeader(http.StatusNoContent)
		}
	case outBad:
		writeBody(w, http.StatusBadRequest, out)
	default:
		writeBody(w, http.StatusOK, out)
	}
}

func acceptsEventStream(accept []string) bool {
	for _, a := range accept {
		for part := range strings.SplitSeq(a, ",") {
			mt, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
				return true
			}
		}
	}
	return false
}

func writeError(w http.ResponseWriter, status int, e *Error) {
	writeBody(w, status, (&response{err: e}).encode())
}

func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}
