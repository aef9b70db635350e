package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Config is every setting of ownsona, with its defaults in NewConfig. Flags win over OWNSONA_*
// environment variables, which win over defaults.
type Config struct {
	// DB is the path of the one file. If empty, ./ownsona.db.
	DB string
	// Addr is where serve listens. If empty, 127.0.0.1:8080.
	Addr string
	// LogLevel is debug, info, warn or error. If empty, info.
	LogLevel string
	// MaxTextChars caps a memory's text, in characters. If zero, 16000.
	MaxTextChars int
	// DedupThreshold is the similarity at or above which a stored memory counts as a near
	// duplicate of a new one. If zero, 0.9.
	DedupThreshold float64
	// Embedder is none (lexical search only) or openai. If empty, none.
	Embedder string
	// EmbedURL is the OpenAI-compatible API base, e.g. http://localhost:11434/v1 for Ollama.
	EmbedURL string
	// EmbedModel is the embedding model name, e.g. nomic-embed-text.
	EmbedModel string
	// EmbedAPIKey is sent as a bearer token to EmbedURL; environment only, never a flag.
	EmbedAPIKey string
	// EmbedTimeout bounds one embedding request. If zero, 30s.
	EmbedTimeout time.Duration

	// Version is stamped into the binary at build time.
	Version string
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
}

// NewConfig returns the defaults.
func NewConfig() Config {
	return Config{
		DB:             "ownsona.db",
		Addr:           "127.0.0.1:8080",
		LogLevel:       "info",
		MaxTextChars:   16000,
		DedupThreshold: 0.9,
		Embedder:       "none",
		EmbedTimeout:   30 * time.Second,
		Version:        "dev",
	}
}

// setting is one configuration knob: its flag, its environment variable and its help.
type setting struct {
	flag, env, help string
	serveOnly       bool
	ptr             any // *string, *int, *float64 or *time.Duration
}

func (c *Config) settings() []setting {
	return []setting{
		{"db", "OWNSONA_DB", "path of the database file", false, &c.DB},
		{"addr", "OWNSONA_ADDR", "listen address (loopback only until OAuth is configured)", true, &c.Addr},
		{"log-level", "OWNSONA_LOG_LEVEL", "debug, info, warn or error", false, &c.LogLevel},
		{"max-text-chars", "OWNSONA_MAX_TEXT_CHARS", "longest memory text, in characters", false, &c.MaxTextChars},
		{"dedup-threshold", "OWNSONA_DEDUP_THRESHOLD", "similarity (0.5-1) at which a new memory is reported as a near duplicate", false, &c.DedupThreshold},
		{"embedder", "OWNSONA_EMBEDDER", "none or openai", false, &c.Embedder},
		{"embed-url", "OWNSONA_EMBED_URL", "OpenAI-compatible API base URL, e.g. http://localhost:11434/v1", false, &c.EmbedURL},
		{"embed-model", "OWNSONA_EMBED_MODEL", "embedding model name", false, &c.EmbedModel},
		{"", "OWNSONA_EMBED_API_KEY", "API key for the embedding endpoint (environment only)", false, &c.EmbedAPIKey},
		{"embed-timeout", "OWNSONA_EMBED_TIMEOUT", "timeout of one embedding request", false, &c.EmbedTimeout},
	}
}

// UsageError is a mistake in the command line or configuration; main exits with status 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usageErr(format string, args ...any) error { return &UsageError{fmt.Sprintf(format, args...)} }

// parseValue sets ptr from s, naming the setting in errors.
func parseValue(name string, ptr any, s string) error {
	switch p := ptr.(type) {
	case *string:
		*p = s
	case *int:
		v, err := strconv.Atoi(s)
		if err != nil {
			return usageErr("%s: %q is not a whole number", name, s)
		}
		*p = v
	case *float64:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return usageErr("%s: %q is not a number", name, s)
		}
		*p = v
	case *time.Duration:
		v, err := time.ParseDuration(s)
		if err != nil {
			return usageErr("%s: %q is not a duration such as 30s or 2m", name, s)
		}
		*p = v
	}
	return nil
}

// loadConfig applies the environment, then the flags of a subcommand, to the defaults.
func loadConfig(cmd string, args []string, getenv func(string) string, stderr io.Writer) (Config, []string, error) {
	c := NewConfig()
	for _, s := range c.settings() {
		if v := getenv(s.env); v != "" {
			if err := parseValue(s.env, s.ptr, v); err != nil {
				return c, nil, err
			}
		}
	}
	fs := flag.NewFlagSet("ownsona "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, s := range c.settings() {
		if s.flag == "" || (s.serveOnly && cmd != "serve") {
			continue
		}
		fs.Func(s.flag, s.help, func(v string) error { return parseValue("--"+s.flag, s.ptr, v) })
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, nil, flag.ErrHelp
		}
		return c, nil, usageErr("%s: %v (see 'ownsona help')", cmd, err)
	}
	return c, fs.Args(), c.validate()
}

// validate checks values that parsed but make no sense.
func (c *Config) validate() error {
	switch {
	case c.DB == "":
		return usageErr("db: the database path is empty")
	case c.MaxTextChars < 1 || c.MaxTextChars > 1_000_000:
		return usageErr("max-text-chars: %d is outside 1..1000000", c.MaxTextChars)
	case c.DedupThreshold < 0.5 || c.DedupThreshold > 1:
		return usageErr("dedup-threshold: %g is outside 0.5..1", c.DedupThreshold)
	case c.EmbedTimeout <= 0:
		return usageErr("embed-timeout: must be positive")
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return usageErr("log-level: %q is not one of debug, info, warn, error", c.LogLevel)
	}
	switch c.Embedder {
	case "none":
	case "openai":
		if c.EmbedURL == "" || c.EmbedModel == "" {
			return usageErr("embedder openai needs OWNSONA_EMBED_URL and OWNSONA_EMBED_MODEL")
		}
	default:
		return usageErr("embedder: %q is not one of none, openai", c.Embedder)
	}
	return nil
}

// checkLoopback refuses a listen address that is not loopback: without OAuth, anyone who can
// reach the port could read and change every memory.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErr("addr: %q is not host:port (%v)", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return usageErr("addr: %q is not a loopback address; until OAuth is configured ownsona serves only 127.0.0.1 or [::1], so that nobody else can reach your memories", addr)
}
