package memory

// What a memory may hold. One validator (Store.check) serves remember, update and import, so a
// rule cannot drift between them: once, import accepted 40 tags while remember refused 33.

import (
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/ownsona/ownsona/app/memtext"
)

// Limits of what a memory may hold, besides the text (Config.MaxTextChars) and the tags
// (memtext.MaxTags, each memtext.MaxTagLength).
const (
	MaxSessionChars   = 200 // session_id
	MaxSourceChars    = 100 // source_provider
	MaxReasonChars    = 1000
	DefaultImportance = 0.5
	// MaxSupersedes is how many memories one remember or update may supersede.
	MaxSupersedes = 50
	// MaxIdempotencyKeyChars is the longest idempotency key (at least one character).
	MaxIdempotencyKeyChars = 200
)

// Capture modes: how a memory came to be written.
const (
	CaptureExplicit = "explicit" // the user asked to remember it
	CaptureInferred = "inferred" // the assistant chose to
	CaptureImport   = "import"   // ownsona import
)

// DedupPolicy says what Remember does with a near duplicate of a stored memory.
type DedupPolicy string

const (
	// DedupAsk stores the memory and reports its near duplicates (the default).
	DedupAsk DedupPolicy = "ask"
	// DedupInsert stores it without looking.
	DedupInsert DedupPolicy = "insert"
	// DedupSkipIfNear stores nothing when a near duplicate exists and returns that one.
	DedupSkipIfNear DedupPolicy = "skip_if_near"
)

// Draft is a memory to remember. Zero fields take the defaults noted.
type Draft struct {
	Text string
	// Tags are normalized (memtext.NormalizeTags): lowercase, deduplicated, at most 32.
	Tags []string
	// Importance is from 0 to 1. If nil, 0.5.
	Importance *float64
	// CaptureMode is CaptureExplicit or CaptureInferred. If empty, explicit.
	CaptureMode string
	// SessionID names the conversation, if any.
	SessionID string
	// ExpiresAt, if set, must be in the future: the memory stops being active then.
	ExpiresAt *time.Time
	// LastConfirmedAt is when the fact was last known true. If nil, now.
	LastConfirmedAt *time.Time
	// SourceProvider names who writes (claude, chatgpt). If empty, the Origin's provider.
	SourceProvider string
	// Dedup is the near-duplicate policy. If empty, DedupAsk.
	Dedup DedupPolicy
	// Supersedes are stored memories this one corrects (at most MaxSupersedes): they leave
	// searches and lists (supersede.go). If empty, none.
	Supersedes []uint64
	// IdempotencyKey, if set (1 to MaxIdempotencyKeyChars characters), names this write for
	// retries: the same key from the same Origin.Principal within IdempotencyTTL answers with
	// the first write's result instead of storing again (idempotency.go).
	IdempotencyKey string
}

// Origin is who writes: the provider (the declared one, else the MCP client's name) and the
// client (the OAuth client or token's name, or the transport: stdio, http).
type Origin struct {
	Provider, Client string
	// Principal owns the idempotency keys: the OAuth client or personal access token
	// ("oauth:<client_id>", "pat:<id>"), or the transport ("stdio"). If empty, Client.
	Principal string
}

// principal is who owns o's idempotency keys.
func (o Origin) principal() string {
	if o.Principal != "" {
		return o.Principal
	}
	return o.Client
}

// Patch changes some fields of one memory; nil fields stay as they are.
type Patch struct {
	ID         uint64
	Text       *string
	Tags       *[]string // an empty list clears the tags
	Importance *float64
	// ExpiresAt sets the expiry, which must be in the future; ClearExpiry removes it.
	ExpiresAt       *time.Time
	ClearExpiry     bool
	LastConfirmedAt *time.Time
	// Supersedes are memories this one now corrects, added to those it already does (at most
	// MaxSupersedes per patch); see supersede.go.
	Supersedes []uint64
}

// Updatable are the fields a Patch can change, in the order changed fields are reported.
var Updatable = []string{"text", "tags", "importance", "expires_at", "last_confirmed_at", "supersedes"}

// check normalizes and validates what m holds, in place: text, tags, importance, capture mode,
// session id and source. Times are the operations' business.
func (s *Store) check(m *Memory) error {
	text, err := memtext.NormalizeText(m.Text, s.maxText)
	if err != nil {
		return err
	}
	if kind, found := memtext.DetectSecret(text); found {
		return &SecretError{Kind: kind}
	}
	m.Text = text
	tags, err := memtext.NormalizeTags(m.Tags)
	if err != nil {
		return err
	}
	if tags == nil {
		tags = []string{}
	}
	m.Tags = tags
	if m.Importance < 0 || m.Importance > 1 || m.Importance != m.Importance {
		return &InputError{Field: "importance", Reason: "must be a number from 0 to 1"}
	}
	switch m.CaptureMode {
	case CaptureExplicit, CaptureInferred, CaptureImport:
	default:
		return &InputError{Field: "capture_mode", Reason: fmt.Sprintf("%q is not explicit or inferred", m.CaptureMode)}
	}
	if n := utf8.RuneCountInString(m.SessionID); n > MaxSessionChars {
		return &InputError{Field: "session_id", Reason: fmt.Sprintf("is %d characters; the limit is %d", n, MaxSessionChars)}
	}
	if n := utf8.RuneCountInString(m.SourceProvider); n > MaxSourceChars {
		return &InputError{Field: "source_provider", Reason: fmt.Sprintf("is %d characters; the limit is %d", n, MaxSourceChars)}
	}
	if n := utf8.RuneCountInString(m.ForgetReason); n > MaxReasonChars {
		return &InputError{Field: "forget_reason", Reason: fmt.Sprintf("is %d characters; the limit is %d", n, MaxReasonChars)}
	}
	return nil
}

// draft turns d into a checked memory written now by o.
func (s *Store) draft(d Draft, o Origin, now time.Time) (*Memory, error) {
	m := &Memory{Text: d.Text, Tags: d.Tags, Importance: DefaultImportance, CaptureMode: d.CaptureMode,
		SessionID: d.SessionID, SourceProvider: d.SourceProvider, SourceClient: o.Client,
		CreatedAt: now, UpdatedAt: now, LastConfirmedAt: now, Supersedes: slices.Clone(d.Supersedes)}
	if d.Importance != nil {
		m.Importance = *d.Importance
	}
	if m.CaptureMode == "" {
		m.CaptureMode = CaptureExplicit
	}
	if m.CaptureMode == CaptureImport {
		return nil, &InputError{Field: "capture_mode", Reason: `"import" is for ownsona import`}
	}
	if m.SourceProvider == "" {
		m.SourceProvider = o.Provider
	}
	if m.SourceProvider == "" {
		m.SourceProvider = "unknown"
	}
	if d.LastConfirmedAt != nil {
		m.LastConfirmedAt = d.LastConfirmedAt.UTC()
	}
	if d.ExpiresAt != nil {
		t := d.ExpiresAt.UTC()
		if !t.After(now) {
			return nil, &InputError{Field: "expires_at", Reason: "is not in the future"}
		}
		m.ExpiresAt = &t
	}
	if err := checkSupersedes(d.Supersedes, 0); err != nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(d.IdempotencyKey); d.IdempotencyKey != "" && n > MaxIdempotencyKeyChars {
		return nil, &InputError{Field: "idempotency_key", Reason: fmt.Sprintf("is %d characters; the limit is %d", n, MaxIdempotencyKeyChars)}
	}
	switch d.Dedup {
	case "", DedupAsk, DedupInsert, DedupSkipIfNear:
	default:
		return nil, &InputError{Field: "dedup_policy", Reason: fmt.Sprintf("%q is not ask, insert or skip_if_near", d.Dedup)}
	}
	if err := s.check(m); err != nil {
		return nil, err
	}
	return m, nil
}

// validate checks a patch's values before any memory is read; now is the time of the update.
func (s *Store) validate(p *Patch, now time.Time) error {
	if p.ID == 0 {
		return &InputError{Field: "id", Reason: "must be a memory id"}
	}
	if p.Text == nil && p.Tags == nil && p.Importance == nil && p.ExpiresAt == nil && !p.ClearExpiry && p.LastConfirmedAt == nil && len(p.Supersedes) == 0 {
		return &InputError{Field: "", Reason: "give at least one of text, tags, importance, expires_at, last_confirmed_at, supersedes"}
	}
	if err := checkSupersedes(p.Supersedes, p.ID); err != nil {
		return err
	}
	if p.ExpiresAt != nil && p.ClearExpiry {
		return &InputError{Field: "expires_at", Reason: "set it or clear it, not both"}
	}
	if p.ExpiresAt != nil && !p.ExpiresAt.After(now) {
		return &InputError{Field: "expires_at", Reason: "is not in the future; use forget to retire a memory"}
	}
	// The values a memory holds are checked by the one validator, on a probe memory.
	probe := Memory{Text: "x", CaptureMode: CaptureExplicit}
	if p.Text != nil {
		probe.Text = *p.Text
	}
	if p.Tags != nil {
		probe.Tags = *p.Tags
	}
	if p.Importance != nil {
		probe.Importance = *p.Importance
	}
	if err := s.check(&probe); err != nil {
		return err
	}
	if p.Text != nil {
		p.Text = &probe.Text
	}
	if p.Tags != nil {
		p.Tags = &probe.Tags
	}
	return nil
}

// apply changes m by p and lists the fields whose values changed.
func (p *Patch) apply(m *Memory, now time.Time) []string {
	var changed []string
	if p.Text != nil && *p.Text != m.Text {
		m.Text = *p.Text
		changed = append(changed, "text")
	}
	if p.Tags != nil && !slices.Equal(*p.Tags, m.Tags) {
		m.Tags = slices.Clone(*p.Tags)
		changed = append(changed, "tags")
	}
	if p.Importance != nil && *p.Importance != m.Importance {
		m.Importance = *p.Importance
		changed = append(changed, "importance")
	}
	switch {
	case p.ClearExpiry && m.ExpiresAt != nil:
		m.ExpiresAt = nil
		changed = append(changed, "expires_at")
	case p.ExpiresAt != nil && (m.ExpiresAt == nil || !p.ExpiresAt.Equal(*m.ExpiresAt)):
		t := p.ExpiresAt.UTC()
		m.ExpiresAt = &t
		changed = append(changed, "expires_at")
	}
	if p.LastConfirmedAt != nil && !p.LastConfirmedAt.Equal(m.LastConfirmedAt) {
		m.LastConfirmedAt = p.LastConfirmedAt.UTC()
		changed = append(changed, "last_confirmed_at")
	}
	if added := addSupersedes(m, p.Supersedes); added {
		changed = append(changed, "supersedes")
	}
	if len(changed) > 0 {
		m.UpdatedAt = now
	}
	return changed
}
