package mcp

// Multi round-trip requests (MCP 2026-07-28, basic/patterns/mrtr): a handler that needs the
// client's input (an elicitation, a sampling, its roots) calls Input or Elicit. In the legacy
// era each question is a server-to-client request on the request's stream, awaited in place. In
// 2026-07-28 no server-to-client request is ever sent: the call ends with an input_required
// result naming what is needed and an integrity-protected requestState, and the client retries
// the same request with inputResponses; the handler runs again from the start and this time
// Input returns the answers. Handlers must therefore do nothing irreversible before their last
// Input.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ownsona/ownsona/jsonrpc"
)

// stateTTL bounds how long an input_required result may be answered: a person reads the
// question and answers it.
const stateTTL = 15 * time.Minute

// InputRequest is one question a handler asks the client: elicitation/create (a form for the
// user), sampling/createMessage (the client's model) or roots/list, with its params.
type InputRequest struct {
	Method string `json:"method"`
	Params any    `json:"params"`
}

// capabilityOf is the client capability an input request needs; "" for methods that are not
// input requests.
func capabilityOf(method string) string {
	switch method {
	case "elicitation/create":
		return "elicitation"
	case "sampling/createMessage":
		return "sampling"
	case "roots/list":
		return "roots"
	}
	return ""
}

// inputRequired is Input's error in the modern era when the retry does not carry every answer:
// exec turns it into an input_required result naming the questions still open.
type inputRequired struct {
	asks map[string]InputRequest
}

func (e *inputRequired) Error() string {
	return "rpc: input required: " + strings.Join(slices.Sorted(maps.Keys(e.asks)), ", ")
}

func asInputRequired(err error) (*inputRequired, bool) {
	var ir *inputRequired
	return ir, errors.As(err, &ir)
}

// Input asks the client of the request in ctx the questions in asks (keyed by names the handler
// chooses, unique within the request) and returns its answers by the same keys: an ElicitResult,
// a CreateMessageResult or a ListRootsResult, as the client sent it. The answers are the
// client's: check them before use.
//
// A client that did not declare the capability a question needs (elicitation, sampling, roots)
// gets MissingCapability, and no question is asked. In the legacy era each question is a
// server-to-client request on the request's stream, awaited in turn (see Request). In 2026-07-28
// Input returns the request's answers when it carries all of them (in its inputResponses, or in
// the requestState of an earlier round, which must be one this server issued for this principal
// and these parameters within 15 minutes); otherwise its error ends the call with an
// input_required result that asks the questions still open, and the handler runs again from the
// start on the retry. A handler that asks in several rounds asks
// the same questions under the same keys, in the same order, every time it runs, and does
// nothing irreversible before its last Input.
func Input(ctx context.Context, asks map[string]InputRequest) (map[string]json.RawMessage, error) {
	ri := infoFrom(ctx)
	if ri == nil {
		return nil, ErrNoStream
	}
	keys := slices.Sorted(maps.Keys(asks))
	var caps params
	declared := true
	if ri.meta.modern {
		caps = ri.meta.caps
	} else if ss := ri.session; ss != nil {
		ss.mu.Lock()
		caps, declared = ss.caps, ss.initialized
		ss.mu.Unlock()
	} else {
		declared = false
	}
	for _, k := range keys {
		c := capabilityOf(asks[k].Method)
		if c == "" {
			return nil, fmt.Errorf("rpc: input %q: %s is not an input request", k, asks[k].Method)
		}
		// A legacy client that skipped initialize declared nothing, and is asked anyway: the
		// era allows it, and its answer (or its error) tells.
		if (ri.meta.modern || declared) && !(&reqMeta{caps: caps}).declares(c) {
			return nil, MissingCapability(c)
		}
	}
	out := make(map[string]json.RawMessage, len(asks))
	if ri.meta.modern {
		open := map[string]InputRequest{}
		for _, k := range keys {
			if v, ok := ri.input[k]; ok {
				out[k] = json.RawMessage(v)
			} else {
				open[k] = asks[k]
			}
		}
		if len(open) > 0 {
			return nil, &inputRequired{asks: open}
		}
		return out, nil
	}
	for _, k := range keys {
		res, err := Request(ctx, asks[k].Method, asks[k].Params)
		if err != nil {
			return nil, err
		}
		out[k] = res
	}
	return out, nil
}

// Elicit asks the client one question (elicitation/create with params: a form's message and
// requestedSchema) under key, and returns its ElicitResult ({"action", "content"}). See Input.
func Elicit(ctx context.Context, key string, params any) (json.RawMessage, error) {
	out, err := Input(ctx, map[string]InputRequest{key: {Method: "elicitation/create", Params: params}})
	if err != nil {
		return nil, err
	}
	return out[key], nil
}

// stateClaims is what a requestState vouches for. It travels through the client, so it is
// signed (HMAC-SHA256 with the server's key) and bound to the principal, the request and a
// deadline; the answers to earlier questions of the same request ride along.
type stateClaims struct {
	Owner   string            `json:"o"`
	Expires int64             `json:"e"`
	Method  string            `json:"m"`
	Digest  string            `json:"d"` // of the request's parameters, _meta and the input aside
	Answers map[string][]byte `json:"a,omitempty"`
}

// stateKey is the key requestStates are signed with: Server.StateKey, else random per process
// (a state then does not survive a restart; the client is simply asked again).
func (s *Server) stateKey() []byte {
	s.stateOnce.Do(func() {
		s.key = s.StateKey
		if len(s.key) == 0 {
			s.key = make([]byte, 32)
			rand.Read(s.key)
		}
	})
	return s.key
}

func (s *Server) sign(c stateClaims) string {
	body, _ := json.Marshal(c)
	mac := hmac.New(sha256.New, s.stateKey())
	mac.Write(body)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(body) + "." + enc.EncodeToString(mac.Sum(nil))
}

// verify returns the claims of a state this server signed, or false.
func (s *Server) verify(state string) (stateClaims, bool) {
	var c stateClaims
	enc := base64.RawURLEncoding
	body64, mac64, ok := bytes.Cut([]byte(state), []byte("."))
	if !ok {
		return c, false
	}
	body, err1 := enc.DecodeString(string(body64))
	sum, err2 := enc.DecodeString(string(mac64))
	if err1 != nil || err2 != nil {
		return c, false
	}
	mac := hmac.New(sha256.New, s.stateKey())
	mac.Write(body)
	if !hmac.Equal(sum, mac.Sum(nil)) || json.Unmarshal(body, &c) != nil {
		return c, false
	}
	return c, true
}

// digest identifies a request by its method and parameters (input, state and _meta aside),
// whatever the order of members and spacing of the JSON the client sent.
func digest(method string, p params) string {
	h := sha256.New()
	h.Write([]byte(method))
	canon := map[string]any{}
	for k, v := range p {
		switch k {
		case "_meta", "inputResponses", "requestState":
			continue
		}
		var x any
		if json.Unmarshal(v, &x) == nil {
			canon[k] = x
		}
	}
	b, _ := json.Marshal(canon) // maps marshal with sorted keys
	h.Write(b)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

func (ri *reqInfo) owner() string {
	if ri.session != nil {
		return ri.session.owner
	}
	return ""
}

// verifyInput reads a 2026-07-28 request's inputResponses and requestState. A requestState is
// attacker-controlled input, so one that is not signed by this server, for the same principal,
// method and parameters, and unexpired, is refused (-32602), as the pattern requires; a valid
// one brings back the answers of earlier rounds. inputResponses count with or without a state:
// they are the client's answers either way, no more trusted for following a state this server
// issued (a client that would skip its user can answer the question as soon as it is asked),
// and the pattern lets a server issue no state at all, so a client may well send answers
// without one. Members of inputResponses that no question asks for are ignored by Input.
func (s *Server) verifyInput(ctx context.Context, ri *reqInfo) error {
	p := ri.params
	ri.input = params{}
	if raw, ok := p["requestState"]; ok && string(raw) != "null" {
		state, err := requiredStr(p, "requestState", "requestState")
		if err != nil {
			return err
		}
		c, ok := s.verify(state)
		switch {
		case !ok:
			return jsonrpc.InvalidParams("requestState", "is not a state this server issued")
		case time.Unix(c.Expires, 0).Before(s.now()):
			return jsonrpc.InvalidParams("requestState", "has expired; send the request again without it")
		case c.Owner != ri.owner() || c.Method != ri.method || c.Digest != digest(ri.method, p):
			return jsonrpc.InvalidParams("requestState", "belongs to another request")
		}
		for k, v := range c.Answers {
			ri.input[k] = v
		}
	}
	if raw, ok := p["inputResponses"]; ok && string(raw) != "null" {
		m, ok := jsonrpc.Members(raw)
		if !ok {
			return jsonrpc.InvalidParams("inputResponses", "must be an object")
		}
		for k, v := range m {
			ri.input[k] = v
		}
	}
	return nil
}

// inputRequiredResult is the interim result of a call that needs the client's input.
func (s *Server) inputRequiredResult(ri *reqInfo, ir *inputRequired) (any, error) {
	answers := map[string][]byte{}
	for k, v := range ri.input {
		answers[k] = v
	}
	state := s.sign(stateClaims{Owner: ri.owner(), Expires: s.now().Add(stateTTL).Unix(), Method: ri.method,
		Digest: digest(ri.method, ri.params), Answers: answers})
	return struct {
		ResultType    string                  `json:"resultType"`
		InputRequests map[string]InputRequest `json:"inputRequests"`
		RequestState  string                  `json:"requestState"`
	}{"input_required", ir.asks, state}, nil
}
