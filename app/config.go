package app

import (
	"errors"
	"flag"
	"io"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // OWNSONA_TIMEZONE on hosts without a zone database

	"github.com/ownsona/ownsona/app/approval"
	"github.com/ownsona/ownsona/app/backup"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/ops"
	"github.com/ownsona/ownsona/app/settings"
	"github.com/ownsona/ownsona/app/tools"
	"github.com/ownsona/ownsona/app/web"
	"github.com/ownsona/ownsona/oauth/grant"
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
	// LogFormat is json (a JSON object a line), text (zerolog's console lines) or auto: text
	// when standard error is a terminal, JSON otherwise. If empty, auto.
	LogFormat string
	// Timezone is the IANA name of the time zone of the calendar in questions ("yesterday",
	// "last week": recall's time words), such as Europe/Berlin. If empty, the host's.
	Timezone string
	// MaxTextChars caps a memory's text, in characters. If zero, 16000.
	MaxTextChars int
	// DedupThreshold is the similarity at or above which a stored memory counts as a near
	// duplicate of a new one. If zero, 0.9.
	DedupThreshold float64
	// Embedder is builtin (static word vectors compiled into the binary), model2vec:DIR (a
	// model2vec/POTION model directory), openai (an OpenAI-compatible endpoint) or none (lexical
	// search only). If empty, builtin.
	Embedder string
	// EmbedURL is the OpenAI-compatible API base, e.g. http://localhost:11434/v1 for Ollama.
	EmbedURL string
	// EmbedModel is the embedding model name, e.g. nomic-embed-text.
	EmbedModel string
	// EmbedAPIKey is sent as a bearer token to EmbedURL; environment only, never a flag.
	EmbedAPIKey string
	// EmbedTimeout bounds one embedding request. If zero, 30s.
	EmbedTimeout time.Duration

	// PublicURL is the origin clients reach serve at, e.g. https://mem.example.com: the OAuth
	// issuer, and with /mcp the resource. If empty, http:// and the loopback listen address.
	PublicURL string
	// LoginUsername is the owner's login name. If empty, owner.
	LoginUsername string
	// LoginPassword is the owner's password: an argon2id hash from `ownsona hash-password`, a
	// bcrypt hash, or plain text; environment only. If empty, one is generated on the first
	// start and its hash kept in the file.
	LoginPassword string
	// AccessTokenTTL is the lifetime of OAuth access tokens. If zero, 1h.
	AccessTokenTTL time.Duration
	// RefreshGrace is how long after its rotation a refresh token presented again gets the
	// successor already issued (clients that race a refresh from two addresses or processes),
	// rather than revoking its family. 0 turns it off: every replay revokes. Default 5m, at
	// most 30m.
	RefreshGrace time.Duration
	// RedirectSchemes are the custom redirect URI schemes (without a dot) clients may register.
	RedirectSchemes []string
	// RedirectHosts, when set, limits https redirect URIs to these hosts (opt-in).
	RedirectHosts []string
	// MetadataHosts are the hosts whose OAuth client ID metadata documents are fetched.
	MetadataHosts []string
	// TrustedProxies are the CIDRs whose X-Forwarded-For is believed for the client address.
	TrustedProxies []string
	// AllowArgumentTokens lets a tools/call without an Authorization header carry its token as
	// the argument access_token or accessToken (seed 001's compatibility clients); never over
	// plain HTTP from another machine. If false (the default), only the header counts.
	AllowArgumentTokens bool

	// TLS is how serve gets HTTPS: off (plain HTTP, behind a proxy or tunnel that terminates
	// TLS), local (ownsona's own certificate authority), acme (Let's Encrypt or ACMECA) or
	// files (CertFile and KeyFile). If empty, off.
	TLS string
	// Domains are the names certificates are for (acme: required; local: besides localhost
	// and loopback addresses). The first one makes the public URL when none is set.
	Domains []string
	// ACMEEmail is the contact address given to the ACME CA. Optional.
	ACMEEmail string
	// ACMECA is the ACME directory URL. If empty, Let's Encrypt's production directory.
	ACMECA string
	// ACMECARoot is a PEM file of roots to trust for the ACME directory's own TLS (a test CA
	// such as Pebble). If empty, the system roots.
	ACMECARoot string
	// CertFile and KeyFile are the PEM certificate chain and key of --tls files.
	CertFile, KeyFile string
	// HTTPAddr is the plain-HTTP listener that answers ACME HTTP-01 challenges and redirects to
	// https. If empty, :80 with --tls acme and none otherwise; "off" disables it.
	HTTPAddr string

	// Tools is the allowlist of tools shown and callable; if empty, every tool. It, Approval,
	// ApprovalTimeout, RateLimit, RateBurst and Compat are run-time settings (app/settings): the
	// console changes them and the file keeps them, unless a flag or the environment gives
	// them (or, in a Config built by hand, a value other than the default).
	Tools []string
	// Approval is which calls wait for the owner's approval: off, hard-delete (forget with
	// hard_delete), destructive (tools annotated destructive) or writes (every tool that is
	// not read-only). If empty, hard-delete.
	Approval string
	// ApprovalBy is whose answer approves such a call: client (the owner in the console, or the
	// user in the client that made it, when it can ask) or owner (the console only, so that a
	// stolen token cannot approve its own call). If empty, client.
	ApprovalBy string
	// ApprovalTimeout is how long such a call waits before it ends with APPROVAL_TIMED_OUT,
	// from 10s to 15m. If zero, 2m.
	ApprovalTimeout time.Duration
	// RateLimit is the requests per minute allowed to one client (token or OAuth client) and
	// to one address for unauthenticated requests; 0 turns limiting off. If unset, 120.
	RateLimit int
	// RateBurst is how many requests a client may send at once before the rate applies. If
	// zero, 20.
	RateBurst int
	// Compat are the compatibility modes for clients written for the seed systems: once,
	// komcp, sophon (app/settings.CompatModes). A run-time setting. If empty, none.
	Compat []string
	// MaxConcurrent bounds the requests served at once (event streams aside); beyond it, 503.
	// If zero, 64.
	MaxConcurrent int
	// MaxUploadMB caps a file uploaded for import (prepare_import_upload), in MiB. If zero, 64.
	MaxUploadMB int
	// MaxResultChars is the longest answer of a tool, resource or prompt, in characters; a
	// longer one is cut at a whole item with a cursor or a note. If zero, 40000 (Claude Code
	// keeps an answer up to 50,000 characters in its context); from 2000 to 500000.
	MaxResultChars int
	// MaxMemories caps the memories the file holds, forgotten ones included; a write past it
	// is refused with LIMIT_EXCEEDED. If zero, 250000; negative: no cap.
	MaxMemories int
	// MaxFileMB caps the data the file holds, in MiB, so that a client cannot fill the disk.
	// If zero, 2048 (1024 on 32-bit systems); negative: no cap.
	MaxFileMB int
	// CORSOrigins are the browser origins allowed to call /mcp and read the discovery
	// documents. If unset, https://claude.ai.
	CORSOrigins []string
	// BackupDir, when set, receives a checked snapshot of the file every BackupEvery while the
	// server runs; the newest BackupKeep are kept. Defaults 24h and 7.
	BackupDir   string
	BackupEvery time.Duration
	BackupKeep  int
	// BackupS3, s3://BUCKET/PREFIX, when set, receives a copy of each scheduled backup once it
	// is written and checked; the newest BackupS3Keep of ours stay (default 7). It needs
	// BackupDir: the local copy is always kept. BackupS3Endpoint is the S3 API's origin (if
	// empty, AWS), BackupS3Region the bucket's region (if empty, asked of the server).
	BackupS3         string
	BackupS3Endpoint string
	BackupS3Region   string
	BackupS3Keep     int
	// BackupS3CredentialsFile is an AWS-style credentials file (mode 0600) with the key pair;
	// if empty, BackupS3AccessKeyID and BackupS3SecretAccessKey (AWS_ACCESS_KEY_ID and
	// AWS_SECRET_ACCESS_KEY, environment only).
	BackupS3CredentialsFile string
	BackupS3AccessKeyID     string
	BackupS3SecretAccessKey string
	// AuditMaxAge and AuditMaxEntries bound the audit log. If zero, 90 days and 100000.
	AuditMaxAge     time.Duration
	AuditMaxEntries int
	// Metrics serves Prometheus metrics at /metrics (app/metrics) to scrapers on this machine,
	// and to others that send MetricsToken. If false (the default), /metrics is 404.
	Metrics bool
	// MetricsToken, when set, is the bearer token a scraper on another machine sends for
	// /metrics; at least 16 characters; environment only. If empty, only this machine's.
	MetricsToken string

	// Version is stamped into the binary at build time.
	Version string
	// Now is the clock. If nil, time.Now.
	Now func() time.Time

	// sources names the run-time settings a flag or the environment gave, with where from
	// ("flag --tools", "OWNSONA_TOOLS"); loadConfig fills it.
	sources map[string]string
	// standalone is ownsona stdio without a server: no console decides approvals, so only the
	// client can.
	standalone bool
}

// NewConfig returns the defaults.
func NewConfig() Config {
	return Config{
		DB:              "ownsona.db",
		Addr:            "127.0.0.1:8080",
		LogLevel:        "info",
		LogFormat:       "auto",
		MaxTextChars:    16000,
		DedupThreshold:  0.9,
		Embedder:        "builtin",
		EmbedTimeout:    30 * time.Second,
		LoginUsername:   "owner",
		AccessTokenTTL:  time.Hour,
		RefreshGrace:    grant.DefaultGraceWindow,
		RedirectSchemes: []string{"cursor"},
		MetadataHosts:   []string{"claude.ai", "claude.com", "chatgpt.com"},
		TLS:             "off",
		Approval:        string(approval.HardDelete),
		ApprovalBy:      string(approval.ByClient),
		ApprovalTimeout: approval.DefaultTimeout,
		RateLimit:       120,
		RateBurst:       20,
		MaxConcurrent:   64,
		MaxUploadMB:     64,
		MaxResultChars:  tools.DefaultMaxResultChars,
		MaxMemories:     memory.DefaultMaxMemories,
		MaxFileMB:       int(memory.DefaultMaxFileBytes >> 20),
		CORSOrigins:     []string{"https://claude.ai"},
		BackupEvery:     24 * time.Hour,
		BackupKeep:      7,
		BackupS3Keep:    7,
		AuditMaxAge:     90 * 24 * time.Hour,
		AuditMaxEntries: 100_000,
		Version:         "dev",
	}
}

// setting is one configuration knob: its flag, its environment variable and its help.
type setting struct {
	flag, env, help string
	serveOnly       bool
	ptr             any // *string, *int, *float64, *bool, *time.Duration or *[]string (comma-separated)
}

func (c *Config) settings() []setting {
	return []setting{
		{"db", "OWNSONA_DB", "path of the database file", false, &c.DB},
		{"addr", "OWNSONA_ADDR", "listen address; other than loopback only with --public-url", true, &c.Addr},
		{"public-url", "OWNSONA_PUBLIC_URL", "origin clients reach the server at, e.g. https://mem.example.com (default http://ADDR on loopback)", true, &c.PublicURL},
		{"login-username", "OWNSONA_LOGIN_USERNAME", "the owner's login name on the OAuth login page", true, &c.LoginUsername},
		{"", "OWNSONA_LOGIN_PASSWORD", "the owner's password: an argon2id hash from 'ownsona hash-password', or plain text (environment only; generated on first start if unset)", true, &c.LoginPassword},
		{"access-token-ttl", "OWNSONA_ACCESS_TOKEN_TTL", "lifetime of OAuth access tokens (1m to 24h)", true, &c.AccessTokenTTL},
		{"refresh-grace", "OWNSONA_REFRESH_GRACE", "how long a just-rotated refresh token, presented again (a client racing its own refresh), gets the successor already issued instead of revoking its family (0 turns it off; at most 30m)", true, &c.RefreshGrace},
		{"redirect-schemes", "OWNSONA_REDIRECT_SCHEMES", "custom redirect URI schemes clients may register, comma-separated", true, &c.RedirectSchemes},
		{"redirect-hosts", "OWNSONA_REDIRECT_HOSTS", "if set, the only https redirect hosts clients may register, comma-separated", true, &c.RedirectHosts},
		{"metadata-hosts", "OWNSONA_METADATA_HOSTS", "hosts whose OAuth client metadata documents are fetched, comma-separated", true, &c.MetadataHosts},
		{"trusted-proxies", "OWNSONA_TRUSTED_PROXIES", "CIDRs of reverse proxies whose X-Forwarded-For is trusted, comma-separated", true, &c.TrustedProxies},
		{"allow-argument-tokens", "OWNSONA_ALLOW_ARGUMENT_TOKENS", "accept a token in the access_token or accessToken argument of a tools/call sent without an Authorization header (1 or 0)", true, &c.AllowArgumentTokens},
		{"tls", "OWNSONA_TLS", "HTTPS: off (behind a proxy or tunnel), local (own CA), acme (Let's Encrypt) or files", true, &c.TLS},
		{"domain", "OWNSONA_DOMAIN", "the names to serve HTTPS for, comma-separated (required with --tls acme)", true, &c.Domains},
		{"acme-email", "OWNSONA_ACME_EMAIL", "contact address for the ACME account (optional)", true, &c.ACMEEmail},
		{"acme-ca", "OWNSONA_ACME_CA", "ACME directory URL (default Let's Encrypt production)", true, &c.ACMECA},
		{"acme-ca-root", "OWNSONA_ACME_CA_ROOT", "PEM file of roots to trust for the ACME directory itself (test CAs such as Pebble)", true, &c.ACMECARoot},
		{"cert", "OWNSONA_TLS_CERT", "PEM certificate chain for --tls files", true, &c.CertFile},
		{"key", "OWNSONA_TLS_KEY", "PEM private key for --tls files", true, &c.KeyFile},
		{"http-addr", "OWNSONA_HTTP_ADDR", "plain-HTTP listener for ACME challenges and the redirect to https (default :80 with --tls acme; off to disable)", true, &c.HTTPAddr},
		{"tools", "OWNSONA_TOOLS", "allowlist of tools to expose, comma-separated (default all)", true, &c.Tools},
		{"rate-limit", "OWNSONA_RATE_LIMIT", "requests per minute per client and per address (0 turns limiting off)", true, &c.RateLimit},
		{"rate-burst", "OWNSONA_RATE_BURST", "requests a client may send at once before the rate applies", true, &c.RateBurst},
		{"approval", "OWNSONA_APPROVAL", "calls that wait for the owner's approval: off, hard-delete, destructive or writes", false, &c.Approval},
		{"approval-by", "OWNSONA_APPROVAL_BY", "whose answer approves a call: client (the owner in the console, or the user in the client that asks) or owner (the console only: a stolen token cannot approve its own call)", false, &c.ApprovalBy},
		{"approval-timeout", "OWNSONA_APPROVAL_TIMEOUT", "how long a call waits for approval before it ends unapproved (10s to 15m)", false, &c.ApprovalTimeout},
		{"compat", "OWNSONA_COMPAT", "compatibility modes for clients written for other servers, comma-separated: once, komcp, sophon (default none)", false, &c.Compat},
		{"max-concurrent", "OWNSONA_MAX_CONCURRENT", "authenticated MCP requests served at once, beyond it 503; one client holds at most half (429 beyond); other requests share a quarter of it (event streams aside)", true, &c.MaxConcurrent},
		{"max-upload-mb", "OWNSONA_MAX_UPLOAD_MB", "largest file an import upload URL takes, in MiB", true, &c.MaxUploadMB},
		{"max-result-chars", "OWNSONA_MAX_RESULT_CHARS", "longest answer of a tool, in characters; a longer one is cut at a whole item, with a cursor or a note (2000 to 500000; Claude Code keeps up to 50000 in its context)", false, &c.MaxResultChars},
		{"max-memories", "OWNSONA_MAX_MEMORIES", "most memories the file holds, forgotten ones included; writes past it answer LIMIT_EXCEEDED (-1: no cap)", false, &c.MaxMemories},
		{"max-file-mb", "OWNSONA_MAX_FILE_MB", "most data the file holds, in MiB, before writes answer LIMIT_EXCEEDED (1024 on 32-bit systems; -1: no cap)", false, &c.MaxFileMB},
		{"cors-origins", "OWNSONA_CORS_ORIGINS", "browser origins allowed to call /mcp and the discovery documents, comma-separated", true, &c.CORSOrigins},
		{"backup-dir", "OWNSONA_BACKUP_DIR", "directory for scheduled backups while serving (off if empty)", true, &c.BackupDir},
		{"backup-every", "OWNSONA_BACKUP_EVERY", "interval of scheduled backups", true, &c.BackupEvery},
		{"backup-keep", "OWNSONA_BACKUP_KEEP", "how many scheduled backups to keep", true, &c.BackupKeep},
		{"backup-s3", "OWNSONA_BACKUP_S3", "s3://BUCKET/PREFIX that receives a copy of each scheduled backup (off if empty; needs --backup-dir)", true, &c.BackupS3},
		{"backup-s3-endpoint", "OWNSONA_BACKUP_S3_ENDPOINT", "the S3 API's origin, e.g. https://s3.eu-central-003.backblazeb2.com or http://127.0.0.1:9000 (empty: AWS)", true, &c.BackupS3Endpoint},
		{"backup-s3-region", "OWNSONA_BACKUP_S3_REGION", "the bucket's region (empty: asked of the server)", true, &c.BackupS3Region},
		{"backup-s3-keep", "OWNSONA_BACKUP_S3_KEEP", "how many scheduled backups to keep in the bucket", true, &c.BackupS3Keep},
		{"backup-s3-credentials-file", "OWNSONA_BACKUP_S3_CREDENTIALS_FILE", "AWS-style credentials file with the bucket's key pair, mode 0600 (empty: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)", true, &c.BackupS3CredentialsFile},
		{"", "AWS_ACCESS_KEY_ID", "the bucket's access key id (environment only)", true, &c.BackupS3AccessKeyID},
		{"", "AWS_SECRET_ACCESS_KEY", "the bucket's secret access key (environment only)", true, &c.BackupS3SecretAccessKey},
		{"audit-max-age", "OWNSONA_AUDIT_MAX_AGE", "how long audit entries are kept", false, &c.AuditMaxAge},
		{"audit-max-entries", "OWNSONA_AUDIT_MAX_ENTRIES", "how many audit entries are kept", false, &c.AuditMaxEntries},
		{"metrics", "OWNSONA_METRICS", "serve Prometheus metrics at /metrics to this machine, and to scrapers elsewhere that send OWNSONA_METRICS_TOKEN (1 or 0)", true, &c.Metrics},
		{"", "OWNSONA_METRICS_TOKEN", "bearer token, at least 16 characters, that a scraper on another machine sends for /metrics (environment only)", true, &c.MetricsToken},
		{"log-level", "OWNSONA_LOG_LEVEL", "debug, info, warn or error", false, &c.LogLevel},
		{"log-format", "OWNSONA_LOG_FORMAT", "json, text, or auto: text when standard error is a terminal, JSON otherwise", false, &c.LogFormat},
		{"timezone", "OWNSONA_TIMEZONE", "time zone of the calendar in questions (\"last week\"), an IANA name such as Europe/Berlin; empty: the host's", false, &c.Timezone},
		{"max-text-chars", "OWNSONA_MAX_TEXT_CHARS", "longest memory text, in characters", false, &c.MaxTextChars},
		{"dedup-threshold", "OWNSONA_DEDUP_THRESHOLD", "similarity (0.5-1) at which a new memory is reported as a near duplicate", false, &c.DedupThreshold},
		{"embedder", "OWNSONA_EMBEDDER", "builtin, model2vec:DIR, openai or none", false, &c.Embedder},
		{"embed-url", "OWNSONA_EMBED_URL", "OpenAI-compatible API base URL, e.g. http://localhost:11434/v1", false, &c.EmbedURL},
		{"embed-model", "OWNSONA_EMBED_MODEL", "embedding model name", false, &c.EmbedModel},
		{"", "OWNSONA_EMBED_API_KEY", "API key for the embedding endpoint (environment only)", false, &c.EmbedAPIKey},
		{"embed-timeout", "OWNSONA_EMBED_TIMEOUT", "timeout of one embedding request", false, &c.EmbedTimeout},
	}
}

// UsageError is a mistake in the command line or configuration; main exits with status 2.
type UsageError = ops.UsageError

func usageErr(format string, args ...any) error { return ops.Usagef(format, args...) }

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
	case *bool:
		switch strings.ToLower(s) {
		case "1", "true", "yes", "on":
			*p = true
		case "0", "false", "no", "off":
			*p = false
		default:
			return usageErr("%s: %q is not 1 or 0 (true or false)", name, s)
		}
	case *time.Duration:
		v, err := time.ParseDuration(s)
		if err != nil {
			return usageErr("%s: %q is not a duration such as 30s or 2m", name, s)
		}
		*p = v
	case *[]string:
		*p = []string{}
		for part := range strings.SplitSeq(s, ",") {
			if part = strings.TrimSpace(part); part != "" {
				*p = append(*p, part)
			}
		}
	}
	return nil
}

// loadConfig applies the environment, then the flags of a subcommand, to the defaults; extra,
// when not nil, adds the command's own flags.
func loadConfig(cmd string, args []string, getenv func(string) string, extra func(*flag.FlagSet)) (Config, []string, error) {
	c := NewConfig()
	c.sources = map[string]string{}
	for _, s := range c.settings() {
		if v := getenv(s.env); v != "" {
			if err := parseValue(s.env, s.ptr, v); err != nil {
				return c, nil, err
			}
			c.sources[s.flag] = s.env
		}
	}
	fs := flag.NewFlagSet("ownsona "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, s := range c.settings() {
		if s.flag == "" || (s.serveOnly && cmd != "serve" && cmd != "doctor") {
			continue
		}
		set := func(v string) error {
			c.sources[s.flag] = "flag --" + s.flag
			return parseValue("--"+s.flag, s.ptr, v)
		}
		if _, ok := s.ptr.(*bool); ok {
			fs.BoolFunc(s.flag, s.help, set) // --flag alone means true
			continue
		}
		fs.Func(s.flag, s.help, set)
	}
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, nil, flag.ErrHelp
		}
		return c, nil, usageErr("%s: %v (see 'ownsona help')", cmd, err)
	}
	return c, fs.Args(), c.validate()
}

// location is the time zone Timezone names; time.Local when it is empty. The zone database is
// compiled into the binary (time/tzdata), so a Pi without one still knows Europe/Berlin.
func (c *Config) location() (*time.Location, error) {
	if c.Timezone == "" {
		return time.Local, nil
	}
	loc, err := time.LoadLocation(c.Timezone)
	if err != nil || c.Timezone == "Local" {
		return nil, usageErr("timezone: %q is not an IANA time zone such as Europe/Berlin or UTC", c.Timezone)
	}
	return loc, nil
}

// loc is location for a validated Config.
func (c *Config) loc() *time.Location {
	loc, err := c.location()
	if err != nil {
		return time.Local
	}
	return loc
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
	case c.AccessTokenTTL < time.Minute || c.AccessTokenTTL > 24*time.Hour:
		return usageErr("access-token-ttl: %s is outside 1m..24h", c.AccessTokenTTL)
	case c.LoginUsername == "":
		return usageErr("login-username: empty")
	}
	for _, cidr := range c.TrustedProxies {
		if _, _, err := net.ParseCIDR(cidr); err != nil {
			return usageErr("trusted-proxies: %q is not a CIDR such as 10.0.0.0/8 or 127.0.0.1/32", cidr)
		}
	}
	switch c.TLS {
	case "off", "local":
	case "acme":
		if len(c.Domains) == 0 {
			return usageErr("tls acme: set OWNSONA_DOMAIN (or --domain) to the name the certificate is for")
		}
	case "files":
		if c.CertFile == "" || c.KeyFile == "" {
			return usageErr("tls files: set both --cert and --key (OWNSONA_TLS_CERT, OWNSONA_TLS_KEY)")
		}
	default:
		return usageErr("tls: %q is not one of off, local, acme, files", c.TLS)
	}
	for _, d := range c.Domains {
		if strings.ContainsAny(d, "/:@ ") || strings.HasPrefix(d, "*") {
			return usageErr("domain: %q is not a host name (no scheme, port or wildcard)", d)
		}
	}
	if err := c.runtime().Validate(nil); err != nil { // the tools' names are checked at Open
		return usageErr("%v", err)
	}
	switch {
	case c.MaxConcurrent < 1 || c.MaxConcurrent > 100_000:
		return usageErr("max-concurrent: %d is outside 1..100000", c.MaxConcurrent)
	case c.MaxUploadMB < 1 || c.MaxUploadMB > 16_384:
		return usageErr("max-upload-mb: %d is outside 1..16384", c.MaxUploadMB)
	case c.BackupEvery < time.Minute:
		return usageErr("backup-every: %s is shorter than 1m", c.BackupEvery)
	case c.BackupKeep < 1:
		return usageErr("backup-keep: %d; keep at least 1", c.BackupKeep)
	case c.BackupS3Keep < 1:
		return usageErr("backup-s3-keep: %d; keep at least 1", c.BackupS3Keep)
	case c.BackupS3 != "" && c.BackupDir == "":
		return usageErr("backup-s3: needs --backup-dir (OWNSONA_BACKUP_DIR): each backup is written and checked there first, and kept")
	case c.AuditMaxAge < time.Hour:
		return usageErr("audit-max-age: %s is shorter than 1h", c.AuditMaxAge)
	case c.AuditMaxEntries < 100:
		return usageErr("audit-max-entries: %d is below 100", c.AuditMaxEntries)
	}
	if c.BackupS3 != "" {
		if _, _, err := backup.ParseS3URL(c.BackupS3); err != nil {
			return usageErr("backup-s3: %v", err)
		}
	}
	for _, o := range c.CORSOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Path != "" || u.RawQuery != "" {
			return usageErr("cors-origins: %q is not an origin such as https://claude.ai", o)
		}
	}
	if _, err := c.location(); err != nil {
		return err
	}
	if c.MaxResultChars != 0 && (c.MaxResultChars < tools.MinMaxResultChars || c.MaxResultChars > tools.MaxMaxResultChars) {
		return usageErr("max-result-chars: %d is outside %d..%d characters", c.MaxResultChars, tools.MinMaxResultChars, tools.MaxMaxResultChars)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return usageErr("log-level: %q is not one of debug, info, warn, error", c.LogLevel)
	}
	switch c.LogFormat {
	case "auto", "text", "json":
	default:
		return usageErr("log-format: %q is not one of auto, text, json", c.LogFormat)
	}
	switch {
	case c.MetricsToken != "" && len(c.MetricsToken) < 16:
		return usageErr("OWNSONA_METRICS_TOKEN: shorter than 16 characters; make one with: openssl rand -hex 32")
	case c.MetricsToken != "" && !c.Metrics:
		return usageErr("OWNSONA_METRICS_TOKEN is set but metrics are off; add --metrics (OWNSONA_METRICS=1) or unset the token")
	}
	switch {
	case c.Embedder == "none" || c.Embedder == "builtin":
	case c.Embedder == "openai":
		if c.EmbedURL == "" || c.EmbedModel == "" {
			return usageErr("embedder openai needs OWNSONA_EMBED_URL and OWNSONA_EMBED_MODEL")
		}
	case strings.HasPrefix(c.Embedder, "model2vec:") && len(c.Embedder) > len("model2vec:"):
	default:
		return usageErr("embedder: %q is not one of builtin, model2vec:DIR, openai, none", c.Embedder)
	}
	return nil
}

// runtime is the run-time settings as the configuration gives them.
func (c *Config) runtime() settings.Settings {
	s := settings.Settings{Tools: c.Tools, Approval: approval.Policy(c.Approval), ApprovalBy: approval.Approvers(c.ApprovalBy), ApprovalTimeout: c.ApprovalTimeout,
		RateLimit: c.RateLimit, RateBurst: c.RateBurst, Compat: c.Compat}
	if s.Approval == "" {
		s.Approval = approval.HardDelete
	}
	if s.ApprovalTimeout == 0 {
		s.ApprovalTimeout = approval.DefaultTimeout
	}
	if s.ApprovalBy == "" {
		s.ApprovalBy = approval.ByClient
	}
	return s
}

// fixedSettings names the run-time settings that the configuration fixes, with where each
// came from: a flag or a variable (loadConfig's record), or, in a Config built by hand, any
// value other than the default.
func (c *Config) fixedSettings() map[string]string {
	got, def := c.runtime(), NewConfig()
	defs := def.runtime()
	out := map[string]string{}
	for _, name := range settings.Names {
		if src, ok := c.sources[name]; ok {
			out[name] = src
			continue
		}
		var differs bool
		switch name {
		case settings.Tools:
			differs = !slices.Equal(got.Tools, defs.Tools)
		case settings.Approval:
			differs = got.Approval != defs.Approval
		case settings.ApprovalBy:
			differs = got.ApprovalBy != defs.ApprovalBy
		case settings.ApprovalTimeout:
			differs = got.ApprovalTimeout != defs.ApprovalTimeout
		case settings.RateLimit:
			differs = got.RateLimit != defs.RateLimit
		case settings.RateBurst:
			differs = got.RateBurst != defs.RateBurst
		case settings.Compat:
			differs = len(got.Compat) > 0
		}
		if differs {
			out[name] = "the configuration"
		}
	}
	return out
}

// checkListen refuses a listen address that is not loopback unless a public URL says where
// clients reach the server: OAuth needs that origin, and without it the address would be
// reachable under names the server cannot vouch for.
func checkListen(addr, publicURL string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErr("addr: %q is not host:port (%v)", addr, err)
	}
	if publicURL != "" || web.LoopbackHost(host) {
		return nil
	}
	if host == "" {
		return usageErr("addr: %q listens on every interface; set OWNSONA_PUBLIC_URL (e.g. https://mem.example.com) or OWNSONA_DOMAIN with --tls, so that OAuth knows the address clients use", addr)
	}
	return usageErr("addr: %q is not a loopback address; set OWNSONA_PUBLIC_URL (e.g. https://mem.example.com) to serve other machines, so that OAuth knows the address clients use", addr)
}
