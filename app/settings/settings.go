package settings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ownsona/ownsona/app/approval"
	"github.com/ownsona/ownsona/kv"
)

// The settings' names: their flags' names, the keys of Config.Fixed and Store.Fixed, and the
// Setting of errors.
const (
	Tools           = "tools"
	Approval        = "approval"
	ApprovalTimeout = "approval-timeout"
	RateLimit       = "rate-limit"
	RateBurst       = "rate-burst"
	Compat          = "compat"
	ApprovalBy      = "approval-by"
)

// Names are the settings' names, in the order a page shows them.
var Names = []string{Tools, Approval, ApprovalBy, ApprovalTimeout, RateLimit, RateBurst, Compat}

// The compatibility modes of the Compat setting, in the order a page shows them: each makes
// the clients written for one of the systems in the seed documents work unchanged.
const (
	CompatONCE   = "once"   // ONCE (seed 001): argument tokens, its server card, its upload tool's name
	CompatKOmcp  = "komcp"  // KOmcp (seed 003): its scopes, its search tool, its error bodies
	CompatSophon = "sophon" // Sophon (seed 004): memory.search, its approval errors, its resources
)

// CompatModes are every compatibility mode.
var CompatModes = []string{CompatONCE, CompatKOmcp, CompatSophon}

// Bounds of the numeric settings (the same as the flags').
const (
	MaxRateLimit = 100_000 // requests per minute; 0 turns limiting off
	MaxRateBurst = 10_000  // at least 1
)

// Bucket holds the stored settings under the key "runtime" (see the package doc).
const Bucket = "settings"

var recordKey = []byte("runtime")

// Settings are the run-time settings.
type Settings struct {
	// Tools is the allowlist: the only tools shown and callable. If empty, every tool.
	Tools []string
	// Approval is which calls wait for the owner's approval: off, hard-delete, destructive or
	// writes (see approval.Policy).
	Approval approval.Policy
	// ApprovalBy is whose answer approves a call: client (the owner in the console, or the user
	// in the client that asks) or owner (the console only). If empty, client.
	ApprovalBy approval.Approvers
	// ApprovalTimeout is how long a call waits for an answer before it ends with
	// APPROVAL_TIMED_OUT: from approval.MinTimeout to approval.MaxTimeout.
	ApprovalTimeout time.Duration
	// RateLimit is the requests per minute allowed to one client and to one address; 0 turns
	// limiting off.
	RateLimit int
	// RateBurst is how many requests a client may send at once before the rate applies.
	RateBurst int
	// Compat are the compatibility modes switched on (CompatModes), in that order. If empty,
	// none: the surface the MCP specification describes, and nothing more.
	Compat []string
}

// Clone returns a copy that shares nothing with s.
func (s Settings) Clone() Settings {
	s.Tools = slices.Clone(s.Tools)
	s.Compat = slices.Clone(s.Compat)
	return s
}

// HasCompat reports whether the compatibility mode called mode is on.
func (s Settings) HasCompat(mode string) bool { return slices.Contains(s.Compat, mode) }

// Validate checks every value; known, when not nil, are the tools the allowlist may name. The
// error is an *InvalidError naming the first setting at fault.
func (s Settings) Validate(known []string) error {
	for _, name := range s.Tools {
		if known != nil && !slices.Contains(known, name) {
			return &InvalidError{Tools, fmt.Sprintf("%q is not a tool of ownsona; the tools are %s", name, strings.Join(known, ", "))}
		}
	}
	if _, err := approval.ParsePolicy(string(s.Approval)); err != nil {
		return &InvalidError{Approval, err.Error()}
	}
	if s.ApprovalBy != "" {
		if _, err := approval.ParseApprovers(string(s.ApprovalBy)); err != nil {
			return &InvalidError{ApprovalBy, err.Error()}
		}
	}
	switch {
	case s.ApprovalTimeout < approval.MinTimeout || s.ApprovalTimeout > approval.MaxTimeout:
		return &InvalidError{ApprovalTimeout, fmt.Sprintf("%s is outside %s..%s", s.ApprovalTimeout, approval.MinTimeout, approval.MaxTimeout)}
	case s.RateLimit < 0 || s.RateLimit > MaxRateLimit:
		return &InvalidError{RateLimit, fmt.Sprintf("%d is outside 0..%d requests per minute", s.RateLimit, MaxRateLimit)}
	case s.RateBurst < 1 || s.RateBurst > MaxRateBurst:
		return &InvalidError{RateBurst, fmt.Sprintf("%d is outside 1..%d", s.RateBurst, MaxRateBurst)}
	}
	for _, mode := range s.Compat {
		if !slices.Contains(CompatModes, mode) {
			return &InvalidError{Compat, fmt.Sprintf("%q is not a compatibility mode; the modes are %s", mode, strings.Join(CompatModes, ", "))}
		}
	}
	return nil
}

// InvalidError is a value that Validate, Set or Open refused.
type InvalidError struct {
	Setting string // its name, e.g. "rate-limit"
	Reason  string
}

func (e *InvalidError) Error() string { return e.Setting + ": " + e.Reason }

// FixedError is Set's refusal to change a setting that a flag or an environment variable
// gives.
type FixedError struct {
	Setting string // its name, e.g. "tools"
	Source  string // e.g. "flag --tools" or "OWNSONA_TOOLS"
}

func (e *FixedError) Error() string {
	return fmt.Sprintf("%s is set by %s, which wins over the settings kept in the file; change %s and restart to change it", e.Setting, e.Source, e.Source)
}

// Config is what Open needs.
type Config struct {
	// Base are the values given by flags and the environment, and the defaults of the rest.
	Base Settings
	// Fixed names the settings whose Base value a flag or an environment variable gave: by
	// setting name (Tools, Approval, …), where it came from ("flag --tools",
	// "OWNSONA_TOOLS"). They win over the stored values, and Set refuses to change them.
	Fixed map[string]string
	// KnownTools are every tool's name, which the allowlist may name; tools are kept in this
	// order. If nil, any name is accepted.
	KnownTools []string
}

// Store is the run-time settings: the values in force, kept in the file. Safe for concurrent
// use.
type Store struct {
	db    *kv.DB
	cfg   Config
	setMu sync.Mutex // one Set (and its hooks) at a time

	mu     sync.RWMutex
	stored record
	now    Settings // in force
	hooks  []func(Settings)
}

// record is the JSON of the stored settings: only those set and different from Base.
type record struct {
	Tools           *[]string `json:"tools,omitempty"`
	Approval        *string   `json:"approval,omitempty"`
	ApprovalBy      *string   `json:"approval_by,omitempty"`
	ApprovalTimeout *string   `json:"approval_timeout,omitempty"`
	RateLimit       *int      `json:"rate_limit,omitempty"`
	RateBurst       *int      `json:"rate_burst,omitempty"`
	Compat          *[]string `json:"compat,omitempty"`
}

// Open reads the stored settings from db and works out the values in force. It fails when a
// stored value in force does not validate (naming the setting, and the flag that would
// override it), or when Base does not.
func Open(db *kv.DB, cfg Config) (*Store, error) {
	cfg.Base = cfg.Base.Clone()
	cfg.Base.Tools = normalTools(cfg.Base.Tools, cfg.KnownTools)
	cfg.Base.Compat = normalTools(cfg.Base.Compat, CompatModes)
	fixed := make(map[string]string, len(cfg.Fixed))
	for k, v := range cfg.Fixed {
		if !slices.Contains(Names, k) {
			return nil, fmt.Errorf("settings: %q is not a run-time setting", k)
		}
		fixed[k] = v
	}
	cfg.Fixed = fixed
	st := &Store{db: db, cfg: cfg}
	var raw []byte
	err := db.View(func(tx *kv.Tx) error {
		if b := tx.Bucket(Bucket); b != nil {
			raw = b.Get(recordKey)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &st.stored); err != nil {
			return nil, fmt.Errorf("read settings: the stored record is not valid: %w", err)
		}
	}
	now, err := st.effective(st.stored)
	if err == nil {
		err = now.Validate(cfg.KnownTools)
	}
	if err != nil {
		var ie *InvalidError
		if errors.As(err, &ie) && !st.isFixed(ie.Setting) {
			return nil, fmt.Errorf("settings kept in the file: %w (change it in the console, or override it with --%s)", err, ie.Setting)
		}
		return nil, err
	}
	st.now = now
	return st, nil
}

func (st *Store) isFixed(name string) bool { _, ok := st.cfg.Fixed[name]; return ok }

// effective is the values in force with rec stored.
func (st *Store) effective(rec record) (Settings, error) {
	s := st.cfg.Base.Clone()
	if rec.Tools != nil && !st.isFixed(Tools) {
		s.Tools = normalTools(*rec.Tools, st.cfg.KnownTools)
	}
	if rec.Approval != nil && !st.isFixed(Approval) {
		s.Approval = approval.Policy(*rec.Approval)
	}
	if rec.ApprovalBy != nil && !st.isFixed(ApprovalBy) {
		s.ApprovalBy = approval.Approvers(*rec.ApprovalBy)
	}
	if rec.ApprovalTimeout != nil && !st.isFixed(ApprovalTimeout) {
		d, err := time.ParseDuration(*rec.ApprovalTimeout)
		if err != nil {
			return s, &InvalidError{ApprovalTimeout, fmt.Sprintf("%q in the file is not a duration", *rec.ApprovalTimeout)}
		}
		s.ApprovalTimeout = d
	}
	if rec.RateLimit != nil && !st.isFixed(RateLimit) {
		s.RateLimit = *rec.RateLimit
	}
	if rec.RateBurst != nil && !st.isFixed(RateBurst) {
		s.RateBurst = *rec.RateBurst
	}
	if rec.Compat != nil && !st.isFixed(Compat) {
		s.Compat = normalTools(*rec.Compat, CompatModes)
	}
	return s, nil
}

// normalTools drops repeated names and, with known, puts them in its order (the tools of the
// allowlist, and the modes of Compat alike).
func normalTools(names, known []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if known != nil {
		slices.SortStableFunc(out, func(a, b string) int {
			ia, ib := slices.Index(known, a), slices.Index(known, b)
			if ia < 0 {
				ia = len(known)
			}
			if ib < 0 {
				ib = len(known)
			}
			return ia - ib
		})
	}
	return out
}

// Get returns the values in force: a copy, which the caller may keep and change.
func (st *Store) Get() Settings {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return st.now.Clone()
}

// Fixed returns the settings that a flag or an environment variable gives, by name, with
// where each came from ("flag --tools", "OWNSONA_TOOLS"): a copy.
func (st *Store) Fixed() map[string]string {
	out := make(map[string]string, len(st.cfg.Fixed))
	for k, v := range st.cfg.Fixed {
		out[k] = v
	}
	return out
}

// Defaults returns the values the settings take when nothing is stored: the defaults, and the
// values of the fixed ones.
func (st *Store) Defaults() Settings { return st.cfg.Base.Clone() }

// OnChange registers fn to be called with the values in force after each Set that changes
// any. See the package doc for when hooks run.
func (st *Store) OnChange(fn func(Settings)) {
	st.mu.Lock()
	st.hooks = append(st.hooks, fn)
	st.mu.Unlock()
}

// Set makes s the values in force and stores them, in one transaction, then runs the OnChange
// hooks when anything changed. It refuses (and changes nothing) when s fails Validate (an
// *InvalidError) or when s changes a fixed setting (a *FixedError naming it and its source);
// a fixed setting given its value in force is fine, so a form may send every field back.
func (st *Store) Set(ctx context.Context, s Settings) error {
	st.setMu.Lock()
	defer st.setMu.Unlock()
	s = s.Clone()
	s.Tools = normalTools(s.Tools, st.cfg.KnownTools)
	s.Compat = normalTools(s.Compat, CompatModes)
	if err := s.Validate(st.cfg.KnownTools); err != nil {
		return err
	}
	st.mu.RLock()
	cur, rec := st.now.Clone(), st.stored
	st.mu.RUnlock()
	for _, name := range Names {
		if src, ok := st.cfg.Fixed[name]; ok && !same(name, s, cur) {
			return &FixedError{Setting: name, Source: src}
		}
	}
	changed := false
	for _, name := range Names {
		if !same(name, s, cur) {
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	base := st.cfg.Base
	store := func(name string) bool { return !st.isFixed(name) }
	if store(Tools) {
		rec.Tools = nil
		if !same(Tools, s, base) {
			rec.Tools = ptr(slices.Clone(s.Tools))
			if *rec.Tools == nil {
				*rec.Tools = []string{}
			}
		}
	}
	if store(Approval) {
		rec.Approval = nil
		if s.Approval != base.Approval {
			rec.Approval = ptr(string(s.Approval))
		}
	}
	if store(ApprovalBy) {
		rec.ApprovalBy = nil
		if s.ApprovalBy != base.ApprovalBy {
			rec.ApprovalBy = ptr(string(s.ApprovalBy))
		}
	}
	if store(ApprovalTimeout) {
		rec.ApprovalTimeout = nil
		if s.ApprovalTimeout != base.ApprovalTimeout {
			rec.ApprovalTimeout = ptr(s.ApprovalTimeout.String())
		}
	}
	if store(RateLimit) {
		rec.RateLimit = nil
		if s.RateLimit != base.RateLimit {
			rec.RateLimit = ptr(s.RateLimit)
		}
	}
	if store(RateBurst) {
		rec.RateBurst = nil
		if s.RateBurst != base.RateBurst {
			rec.RateBurst = ptr(s.RateBurst)
		}
	}
	if store(Compat) {
		rec.Compat = nil
		if !same(Compat, s, base) {
			rec.Compat = ptr(slices.Clone(s.Compat))
			if *rec.Compat == nil {
				*rec.Compat = []string{}
			}
		}
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("store settings: %w", err)
	}
	err = st.db.Update(func(tx *kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(Bucket)
		if err != nil {
			return err
		}
		return b.Put(recordKey, raw)
	})
	if err != nil {
		return fmt.Errorf("store settings: %w", err)
	}
	st.mu.Lock()
	st.stored, st.now = rec, s
	hooks := slices.Clone(st.hooks)
	st.mu.Unlock()
	for _, fn := range hooks {
		fn(s.Clone())
	}
	return nil
}

// same reports whether a and b agree on the setting called name.
func same(name string, a, b Settings) bool {
	switch name {
	case Tools:
		return slices.Equal(a.Tools, b.Tools)
	case Approval:
		return a.Approval == b.Approval
	case ApprovalBy:
		return a.ApprovalBy == b.ApprovalBy
	case ApprovalTimeout:
		return a.ApprovalTimeout == b.ApprovalTimeout
	case RateLimit:
		return a.RateLimit == b.RateLimit
	case RateBurst:
		return a.RateBurst == b.RateBurst
	case Compat:
		return slices.Equal(a.Compat, b.Compat)
	}
	return true
}

func ptr[T any](v T) *T { return &v }
