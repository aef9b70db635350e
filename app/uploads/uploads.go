package uploads

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/ownsona/ownsona/app/importers"
	"github.com/ownsona/ownsona/app/memory"
)

// Defaults of Config.
const (
	DefaultMaxBytes      = 64 << 20
	DefaultTTL           = 10 * time.Minute
	DefaultImportTimeout = 15 * time.Minute
)

// ExpansionFactor bounds what an uploaded file may expand to when it is compressed: every
// layer together at most ExpansionFactor × Config.MaxBytes, and never more than
// importers.MaxExpandedCeiling (SECURITY.md UP-01).
const ExpansionFactor = 16

// TokenPrefix begins every upload token, so that a token says what it is.
const TokenPrefix = "osu_"

// Path is where upload URLs live: Path + the upload's id, under the public origin.
const Path = "/mcp/upload/"

// Bounds on what one server keeps.
const (
	maxJobs            = 100 // jobs remembered; the oldest finished ones go first
	maxWaitingPerOwner = 10  // unused upload URLs one principal may hold
	maxRunning         = 2   // imports running at once (each holds its file in memory)
	maxFilenameChars   = 200
)

// Config is what New needs.
type Config struct {
	// Memories is the store imports write to.
	Memories *memory.Store
	// BaseURL returns the server's public origin (https://mem.example.com, no path), read
	// when an upload URL is made; "" when the server does not serve HTTP, and then Prepare
	// refuses.
	BaseURL func() string
	// MaxBytes caps an uploaded file. If zero or negative, DefaultMaxBytes (64 MiB).
	MaxBytes int64
	// TTL is how long an upload URL stays valid. If zero or negative, DefaultTTL (10 min).
	TTL time.Duration
	// ImportTimeout is how long one import may run (by the store's clock); past it the
	// import fails, keeping what it stored. If zero or negative, DefaultImportTimeout (15 min).
	ImportTimeout time.Duration
	// Now is the clock of expiry and of the jobs' times. If nil, time.Now.
	Now func() time.Time
	// Log receives imports that failed. If zero, silent.
	Log zerolog.Logger
}

// Owner is the principal an upload belongs to: Key tells principals apart (oauth.Principal's
// Key), Name is what imported memories record as their source_client.
type Owner struct{ Key, Name string }

// Ticket is a prepared upload: where to send the file, with which token, until when, and how
// large it may be.
type Ticket struct {
	ID        string
	URL       string
	Token     string
	ExpiresAt time.Time
	MaxBytes  int64
}

// Refusal is an upload that is not accepted, or a ticket not given out. Code is a short
// machine-readable reason (the HTTP side maps it to a status); Message says what was wrong
// and what to do.
type Refusal struct{ Code, Message string }

func (r *Refusal) Error() string { return r.Message }

// RefusalCode is Code, for callers that match on it without importing this package.
func (r *Refusal) RefusalCode() string { return r.Code }

// Codes of Refusal.
const (
	CodeInvalidToken = "invalid_upload_token"      // unknown, malformed, or not for this server
	CodeAccessToken  = "access_token_not_accepted" // an OAuth or personal access token was sent
	CodeWrongURL     = "wrong_upload_url"          // the token belongs to another upload URL
	CodeUsed         = "upload_token_used"
	CodeExpired      = "upload_token_expired"
	CodeBusy         = "imports_busy"     // too many imports running
	CodeTooMany      = "too_many_uploads" // the principal holds too many unused upload URLs
	CodeNotServing   = "uploads_unavailable"
	CodeEmpty        = "empty_upload"
	CodeInProgress   = "upload_in_progress" // another transfer to the same URL is under way
)

// Service gives out upload tickets, takes the files sent with them and runs their imports.
// Safe for concurrent use. Close ends running imports.
type Service struct {
	cfg Config

	mu     sync.Mutex
	jobs   map[string]*job // by id
	order  []string        // ids, oldest first
	byHash map[[32]byte]string
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type job struct {
	memory.ImportJob
	hash      [32]byte
	format    string // as asked; "" to detect
	used      bool
	receiving bool // a transfer to its URL is under way (Begin)
}

// New makes the service; nothing runs until a file is received.
func New(cfg Config) *Service {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.ImportTimeout <= 0 {
		cfg.ImportTimeout = DefaultImportTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{cfg: cfg, jobs: map[string]*job{}, byHash: map[[32]byte]string{}, ctx: ctx, cancel: cancel}
}

// MaxBytes is the cap on an uploaded file.
func (s *Service) MaxBytes() int64 { return s.cfg.MaxBytes }

// MaxExpanded is the cap on what an uploaded file expands to: ExpansionFactor × MaxBytes,
// at most importers.MaxExpandedCeiling.
func (s *Service) MaxExpanded() int64 {
	return min(ExpansionFactor*s.cfg.MaxBytes, importers.MaxExpandedCeiling)
}

// Prepare gives owner a one-time upload URL and token for a file called filename in format
// (ParseImportFormat's names; "" to detect it from the content). It refuses a format it does
// not know (*memory.InputError), an owner holding too many unused URLs, and a server that
// does not serve HTTP (*Refusal).
func (s *Service) Prepare(owner Owner, filename, format string) (Ticket, error) {
	f, err := importers.ParseImportFormat(format)
	if err != nil {
		return Ticket{}, err
	}
	filename = strings.TrimSpace(filename)
	if filename == "" || !utf8.ValidString(filename) || strings.ContainsAny(filename, "\x00\r\n") {
		return Ticket{}, &memory.InputError{Field: "filename", Reason: "must be a file name of one line"}
	}
	if n := utf8.RuneCountInString(filename); n > maxFilenameChars {
		return Ticket{}, &memory.InputError{Field: "filename", Reason: fmt.Sprintf("is %d characters; the limit is %d", n, maxFilenameChars)}
	}
	base := ""
	if s.cfg.BaseURL != nil {
		base = strings.TrimSuffix(s.cfg.BaseURL(), "/")
	}
	if base == "" {
		return Ticket{}, &Refusal{CodeNotServing, "uploads need the HTTP server (ownsona serve); over stdio, import the file with `ownsona import FILE`"}
	}
	id, token := random(16), TokenPrefix+random(32)
	now := s.cfg.Now().UTC()
	expires := now.Add(s.cfg.TTL)
	s.mu.Lock()
	defer s.mu.Unlock()
	waiting := 0
	for _, j := range s.jobs {
		if j.Owner == owner.Key && s.stateLocked(j, now) == memory.ImportWaiting {
			waiting++
		}
	}
	if waiting >= maxWaitingPerOwner {
		return Ticket{}, &Refusal{CodeTooMany, fmt.Sprintf("this client holds %d unused upload URLs, the most it may; use one, or wait until they expire (%s after they were made)", waiting, s.cfg.TTL)}
	}
	j := &job{ImportJob: memory.ImportJob{ID: id, Filename: filename, Client: owner.Name, Owner: owner.Key, State: memory.ImportWaiting,
		Format: f, Errors: []memory.ImportError{}, CreatedAt: now, ExpiresAt: &expires}, hash: sha256.Sum256([]byte(token)), format: f}
	s.jobs[id] = j
	s.order = append(s.order, id)
	s.byHash[j.hash] = id
	s.pruneLocked(now)
	return Ticket{ID: id, URL: base + Path + id, Token: token, ExpiresAt: expires, MaxBytes: s.cfg.MaxBytes}, nil
}

// random is n random bytes in base64url.
func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Begin claims the upload URL of id for one transfer, if token opens it now, without
// spending the token: it returns the most bytes the file may have and the function that ends
// the transfer (call it once the body is read and handed to Receive, or refused), or a
// *Refusal. While one transfer holds the URL, another is refused with CodeInProgress
// (SECURITY.md UP-02): one token cannot carry a crowd of concurrent bodies.
func (s *Service) Begin(id, token string) (maxBytes int64, end func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, err := s.checkLocked(id, token)
	if err != nil {
		return 0, nil, err
	}
	if j.receiving {
		return 0, nil, &Refusal{CodeInProgress, "another transfer to this upload URL is under way; a URL takes one at a time: wait for its answer (the token stays valid if it fails)"}
	}
	j.receiving = true
	var once sync.Once
	return s.cfg.MaxBytes, func() {
		once.Do(func() {
			s.mu.Lock()
			j.receiving = false
			s.mu.Unlock()
		})
	}, nil
}

// checkLocked finds the job token opens at id.
func (s *Service) checkLocked(id, token string) (*job, error) {
	if !strings.HasPrefix(token, TokenPrefix) {
		if strings.Count(token, ".") == 2 || strings.HasPrefix(token, "osk_") {
			return nil, &Refusal{CodeAccessToken, "this URL takes only the upload token that prepare_import_upload returned with it, not an access token"}
		}
		return nil, &Refusal{CodeInvalidToken, "not an upload token: send the upload_token that prepare_import_upload returned, as \"Authorization: Bearer <upload_token>\""}
	}
	h := sha256.Sum256([]byte(token))
	j := s.jobs[id]
	if j == nil || subtle.ConstantTimeCompare(j.hash[:], h[:]) != 1 {
		if other, ok := s.byHash[h]; ok && other != id {
			return nil, &Refusal{CodeWrongURL, "this upload token belongs to another upload URL: send the file to the upload_url that prepare_import_upload returned with it"}
		}
		return nil, &Refusal{CodeInvalidToken, "unknown upload token or upload URL (a server restart voids them); call prepare_import_upload for another"}
	}
	now := s.cfg.Now().UTC()
	switch {
	case j.used:
		return nil, &Refusal{CodeUsed, fmt.Sprintf("this upload token was used already, at %s; each one takes one file: call prepare_import_upload for another", j.StartedAt.Format(time.RFC3339))}
	case s.stateLocked(j, now) == memory.ImportExpired:
		return nil, &Refusal{CodeExpired, fmt.Sprintf("this upload token expired at %s (it is valid %s); call prepare_import_upload for another", j.ExpiresAt.Format(time.RFC3339), s.cfg.TTL)}
	}
	running := 0
	for _, o := range s.jobs {
		if o.State == memory.ImportRunning {
			running++
		}
	}
	if running >= maxRunning {
		return nil, &Refusal{CodeBusy, fmt.Sprintf("%d imports are running, the most at once; retry in a minute (the token stays valid until it expires)", running)}
	}
	return j, nil
}

// stateLocked is j's state at now: a waiting job past its expiry has expired.
func (s *Service) stateLocked(j *job, now time.Time) string {
	if j.State == memory.ImportWaiting && !now.Before(*j.ExpiresAt) {
		j.State = memory.ImportExpired
		delete(s.byHash, j.hash)
	}
	return j.State
}

// Receive spends token on the upload URL of id and starts importing body in the background.
// It returns the job as it starts, or a *Refusal (see Begin). body is the file in pieces, in
// order, as it arrived; the import reads them and lets each go once read, so the caller must
// not use them afterwards.
func (s *Service) Receive(id, token string, body [][]byte) (memory.ImportJob, error) {
	s.mu.Lock()
	j, err := s.checkLocked(id, token)
	if err != nil {
		s.mu.Unlock()
		return memory.ImportJob{}, err
	}
	size, blank := int64(0), true
	for _, b := range body {
		size += int64(len(b))
		blank = blank && len(bytes.TrimSpace(b)) == 0
	}
	if blank {
		s.mu.Unlock()
		return memory.ImportJob{}, &Refusal{CodeEmpty, "the upload is empty: send the file as the request body (curl --data-binary @FILE) or as the form field file (curl -F file=@FILE); the token stays valid"}
	}
	now := s.cfg.Now().UTC()
	j.used = true
	j.State, j.Bytes, j.StartedAt, j.ExpiresAt = memory.ImportRunning, size, &now, nil
	snap := j.snapshot()
	s.wg.Add(1)
	s.mu.Unlock()
	go s.run(j, body)
	return snap, nil
}

// run imports body for j.
func (s *Service) run(j *job, body [][]byte) {
	defer s.wg.Done()
	opt := importers.ImportOptions{Format: j.format, Client: j.Client,
		MaxExpanded: s.MaxExpanded(), MaxExpandedLimit: "max-upload-mb", MaxDuration: s.cfg.ImportTimeout,
		Progress: func(st memory.ImportStats) {
			s.mu.Lock()
			j.Format, j.Read, j.Imported, j.Skipped, j.Failed = st.Format, st.Read, st.Imported, st.Skipped, st.Bad
			s.mu.Unlock()
		},
		OnError: func(e memory.ImportError) {
			s.mu.Lock()
			if len(j.Errors) < memory.MaxJobErrors {
				j.Errors = append(j.Errors, e)
			} else {
				j.MoreErrors++
			}
			j.Failed++
			s.mu.Unlock()
		},
	}
	st, err := importers.ImportFrom(s.ctx, s.cfg.Memories, fileReader(body), opt)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now().UTC()
	j.Read, j.Imported, j.Skipped, j.Failed, j.LinksSkipped, j.FinishedAt = st.Read, st.Imported, st.Skipped, st.Bad, st.LinksSkipped, &now
	if st.Format != "" {
		j.Format = st.Format
	}
	j.State = memory.ImportDone
	if err != nil {
		j.State, j.Error = memory.ImportFailed, err.Error()
		if errors.Is(err, context.Canceled) {
			j.Error = "the server stopped during the import; what was stored before stays (a new upload of the file skips it)"
		}
		s.cfg.Log.Warn().Err(err).Str("upload", j.ID).Str("client", j.Client).Msg("import failed")
	}
}

// fileReader reads the pieces of an uploaded file. A zip is read by its directory, at the end,
// which the importer finds through a *bytes.Reader: its pieces are joined into one (twice the
// file for the moment of the copy), as is a file of one piece. Any other file is read through
// net.Buffers, which drops each piece once read, so that the import holds less and less of it.
func fileReader(body [][]byte) io.Reader {
	if len(body) == 1 {
		return bytes.NewReader(body[0])
	}
	if len(body) > 0 && bytes.HasPrefix(body[0], []byte("PK\x03\x04")) {
		n := 0
		for _, b := range body {
			n += len(b)
		}
		whole := make([]byte, 0, n)
		for i, b := range body {
			whole = append(whole, b...)
			body[i] = nil
		}
		return bytes.NewReader(whole)
	}
	file := net.Buffers(body)
	return &file
}

// snapshot copies j's public part.
func (j *job) snapshot() memory.ImportJob {
	c := j.ImportJob
	c.Errors = slices.Clone(j.Errors)
	return c
}

// Jobs returns the jobs of the principal owner (every job when owner is ""), newest first.
func (s *Service) Jobs(owner string) []memory.ImportJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now().UTC()
	var out []memory.ImportJob
	for i := len(s.order) - 1; i >= 0; i-- {
		j := s.jobs[s.order[i]]
		if owner != "" && j.Owner != owner {
			continue
		}
		s.stateLocked(j, now)
		out = append(out, j.snapshot())
	}
	return out
}

// Job returns the job id if it belongs to owner (any owner when owner is "").
func (s *Service) Job(owner, id string) (memory.ImportJob, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[id]
	if j == nil || (owner != "" && j.Owner != owner) {
		return memory.ImportJob{}, false
	}
	s.stateLocked(j, s.cfg.Now().UTC())
	return j.snapshot(), true
}

// pruneLocked forgets the oldest finished or expired jobs past maxJobs.
func (s *Service) pruneLocked(now time.Time) {
	for i := 0; len(s.order) > maxJobs && i < len(s.order); {
		j := s.jobs[s.order[i]]
		if st := s.stateLocked(j, now); st == memory.ImportWaiting || st == memory.ImportRunning {
			i++
			continue
		}
		delete(s.jobs, j.ID)
		if s.byHash[j.hash] == j.ID {
			delete(s.byHash, j.hash)
		}
		s.order = slices.Delete(s.order, i, i+1)
	}
}

// Close ends running imports (what they stored stays) and waits for them.
func (s *Service) Close() {
	if s == nil {
		return
	}
	s.cancel()
	s.wg.Wait()
}
