package memory

import "time"

// States of an ImportJob.
const (
	ImportWaiting = "waiting" // for its file (an upload URL that has not been used yet)
	ImportExpired = "expired" // its upload URL expired unused
	ImportRunning = "running"
	ImportDone    = "done"
	ImportFailed  = "failed" // the input could not be read at all, or storage failed; Error says why
)

// ImportJob is the progress of one import that runs in the background (an upload): what the
// import_status tool and the console's System page show. Counts are those of ImportStats.
type ImportJob struct {
	ID       string `json:"id"`
	Filename string `json:"filename"`
	// Client is who imports: the name imported memories record as their source_client.
	Client string `json:"client"`
	// Owner is the key of the principal the job belongs to; never shown.
	Owner    string `json:"-"`
	State    string `json:"state"`
	Format   string `json:"format,omitempty"` // detected, or as asked
	Bytes    int64  `json:"bytes"`
	Read     int    `json:"read"`
	Imported int    `json:"imported"`
	Skipped  int    `json:"skipped"` // already stored
	Failed   int    `json:"failed"`  // lines or items not imported, the first of them in Errors
	// LinksSkipped counts supersedes links of the file not restored (ImportStats.LinksSkipped).
	LinksSkipped int           `json:"links_skipped,omitempty"`
	Errors       []ImportError `json:"errors"`
	MoreErrors   int           `json:"more_errors,omitempty"` // failures past the first MaxJobErrors
	Error        string        `json:"error,omitempty"`       // why a failed import stopped
	CreatedAt    time.Time     `json:"created_at"`
	ExpiresAt    *time.Time    `json:"expires_at,omitempty"` // of the upload URL, while waiting
	StartedAt    *time.Time    `json:"started_at,omitempty"`
	FinishedAt   *time.Time    `json:"finished_at,omitempty"`
}

// MaxJobErrors is how many per-line errors an ImportJob keeps.
const MaxJobErrors = 100
