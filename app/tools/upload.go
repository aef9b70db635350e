package tools

// prepare_import_upload and import_status: large imports that do not travel through the
// conversation (seed 001's prepare_local_file_upload). The client gets a one-time URL and
// token, POSTs the file with curl, and follows the import while it runs in the background.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/mcp"
	"github.com/ownsona/ownsona/oauth"
)

// Uploads is what the import tools need of the server: upload tokens bound to the caller and
// the progress of imports (app/uploads, through app).
type Uploads interface {
	// PrepareUpload gives the principal owner (a Key of oauth.Principal), whose imported
	// memories record name as their source_client, a one-time URL and token for a file. Its
	// errors are a *memory.InputError for an argument, or a refusal whose message says why.
	PrepareUpload(owner, name, filename, format string) (url, token string, expires time.Time, maxBytes int64, err error)
	// ImportJobs are owner's imports, newest first.
	ImportJobs(owner string) []memory.ImportJob
	// ImportJob is owner's import id, if there is one.
	ImportJob(owner, id string) (memory.ImportJob, bool)
}

type prepareUploadArgs struct {
	Filename string `json:"filename" desc:"the file's name, e.g. memories.jsonl, to recognize it in import_status" schema:"required,min=1,max=200"`
	Format   string `json:"format" desc:"the file's format; auto (default) detects it" schema:"enum=auto|ownsona|server-memory|mcp-memory-service|mem0|markdown"`
}

type importStatusArgs struct {
	ID string `json:"id" desc:"the upload id prepare_import_upload returned; omitted: every import of this client, newest first" schema:"min=1,max=100"`
}

type prepareUploadPayload struct {
	OK          bool   `json:"ok"`
	UploadID    string `json:"upload_id"`
	UploadURL   string `json:"upload_url"`
	UploadToken string `json:"upload_token"`
	ExpiresAt   string `json:"expires_at"`
	MaxBytes    int64  `json:"max_bytes"`
	Method      string `json:"method"`
	Curl        string `json:"curl"`
	Message     string `json:"message"`
}

type importStatusPayload struct {
	OK      bool        `json:"ok"`
	Imports []importJob `json:"imports"`
	cutNote
}

// importJob is an import in import_status: memory.ImportJob without its owner.
type importJob struct {
	ID           string        `json:"id" schema:"required"`
	Filename     string        `json:"filename"`
	Client       string        `json:"client"`
	State        string        `json:"state" schema:"required,enum=waiting|expired|running|done|failed"`
	Format       string        `json:"format,omitempty"`
	Bytes        int64         `json:"bytes"`
	Read         int           `json:"read"`
	Imported     int           `json:"imported"`
	Skipped      int           `json:"skipped"`
	Failed       int           `json:"failed"`
	LinksSkipped int           `json:"links_skipped,omitempty"`
	Errors       []importError `json:"errors"`
	MoreErrors   int           `json:"more_errors,omitempty"`
	Error        string        `json:"error,omitempty"`
	CreatedAt    time.Time     `json:"created_at"`
	ExpiresAt    *time.Time    `json:"expires_at,omitempty"`
	StartedAt    *time.Time    `json:"started_at,omitempty"`
	FinishedAt   *time.Time    `json:"finished_at,omitempty"`
}

// importError is a line or item of an import that was not imported.
type importError struct {
	Line  int    `json:"line,omitempty"`
	Item  int    `json:"item,omitempty"`
	Error string `json:"error"`
}

// importJobsOf is jobs in a payload: [] for none.
func importJobsOf(jobs ...memory.ImportJob) []importJob {
	out := make([]importJob, len(jobs))
	for i, j := range jobs {
		out[i] = importJob{ID: j.ID, Filename: j.Filename, Client: j.Client, State: j.State, Format: j.Format, Bytes: j.Bytes,
			Read: j.Read, Imported: j.Imported, Skipped: j.Skipped, Failed: j.Failed, LinksSkipped: j.LinksSkipped,
			MoreErrors: j.MoreErrors, Error: j.Error, CreatedAt: j.CreatedAt, ExpiresAt: clonePtr(j.ExpiresAt),
			StartedAt: clonePtr(j.StartedAt), FinishedAt: clonePtr(j.FinishedAt), Errors: make([]importError, len(j.Errors))}
		for k, e := range j.Errors {
			out[i].Errors[k] = importError{Line: e.Line, Item: e.Item, Error: e.Error}
		}
	}
	return out
}

func (p importStatusPayload) listLen() int { return len(p.Imports) }

func (p importStatusPayload) trimmed(n, _ int) any {
	q := p
	q.Imports = firstOf(p.Imports, n)
	q.cutNote = newCut(len(p.Imports), n, "%d older imports", "ask for one with its id", nil, 0)
	return q
}

const prepareUploadDesc = "Get a one-time URL and token to upload a large file of memories to import, instead of passing it through the conversation: " +
	"ownsona's export, the reference memory server's memory.jsonl, mcp-memory-service's or Mem0/OpenMemory's export, or Markdown/text (one memory per paragraph or list item). " +
	"Then POST the file to upload_url with the token as a bearer token, e.g. with the curl command returned, within ten minutes; the token works once. " +
	"The import runs in the background: follow it with import_status."

// prepareUploadDef is prepare_import_upload, named name.
func (s *Server) prepareUploadDef(name, title, desc string) def[prepareUploadArgs, prepareUploadPayload] {
	return def[prepareUploadArgs, prepareUploadPayload]{
		name: name, title: title, desc: desc,
		ann: writes(false, false),
		run: s.prepareUpload,
	}
}

// importTools are prepare_import_upload and import_status. Without Config.Uploads they are
// listed all the same (tools/list stays one list) and answer that this server takes no uploads.
func (s *Server) importTools() []*mcp.Tool {
	return []*mcp.Tool{
		newTool(s, s.prepareUploadDef("prepare_import_upload", "Prepare a file upload for import", prepareUploadDesc)),
		newTool(s, def[importStatusArgs, importStatusPayload]{
			name: "import_status", title: "Import status",
			desc: "The progress of uploaded imports of this client: state (waiting for the file, running, done, failed, expired), the format, how many memories were read, imported, skipped as already stored and failed, and the first per-line errors.",
			ann:  readOnly(),
			run:  s.importStatus,
		}),
	}
}

func (s *Server) prepareUpload(ctx context.Context, in prepareUploadArgs) (prepareUploadPayload, error) {
	if s.uploads == nil {
		return prepareUploadPayload{}, errNoUploads
	}
	p, ok := oauth.PrincipalFrom(ctx)
	if !ok {
		return prepareUploadPayload{}, &toolError{Code: codeInvalidInput, Message: "uploads are for clients of the HTTP endpoint, whose token they are bound to; " +
			"over stdio, import the file on this machine with `ownsona import FILE`"}
	}
	url, token, expires, maxBytes, err := s.uploads.PrepareUpload(p.Key(), p.Name, in.Filename, in.Format)
	if err != nil {
		var ie *memory.InputError
		if errors.As(err, &ie) {
			return prepareUploadPayload{}, err
		}
		return prepareUploadPayload{}, &toolError{Code: codeLimitExceeded, Message: err.Error()}
	}
	return prepareUploadPayload{OK: true, UploadID: uploadID(url), UploadURL: url, UploadToken: token,
		ExpiresAt: expires.UTC().Format(time.RFC3339), MaxBytes: maxBytes, Method: "POST",
		Curl: fmt.Sprintf("curl -sS -H 'Authorization: Bearer %s' --data-binary @%s '%s'", token, shellWord(in.Filename), url),
		Message: fmt.Sprintf("POST the file (at most %d bytes) to upload_url with \"Authorization: Bearer <upload_token>\" before %s; "+
			"the token works once. Then call import_status.", maxBytes, expires.UTC().Format(time.RFC3339))}, nil
}

func (s *Server) importStatus(ctx context.Context, in importStatusArgs) (importStatusPayload, error) {
	if s.uploads == nil {
		return importStatusPayload{OK: true, Imports: []importJob{}}, nil
	}
	owner := "stdio" // no principal: nothing was uploaded over stdio
	if p, ok := oauth.PrincipalFrom(ctx); ok {
		owner = p.Key()
	}
	if in.ID != "" {
		j, ok := s.uploads.ImportJob(owner, in.ID)
		if !ok {
			return importStatusPayload{}, &toolError{Code: codeNotFound, Message: fmt.Sprintf("no import %q of this client (imports are kept in memory until the server restarts)", in.ID)}
		}
		return importStatusPayload{OK: true, Imports: importJobsOf(j)}, nil
	}
	return importStatusPayload{OK: true, Imports: importJobsOf(s.uploads.ImportJobs(owner)...)}, nil
}

// errNoUploads answers prepare_import_upload on a server built without Config.Uploads.
var errNoUploads = &toolError{Code: codeLimitExceeded, Message: "this server takes no uploads; import the file on the server with `ownsona import FILE`"}

// uploadID is the last path segment of an upload URL.
func uploadID(url string) string {
	for i := len(url) - 1; i >= 0; i-- {
		if url[i] == '/' {
			return url[i+1:]
		}
	}
	return url
}

// shellWord quotes a file name for the curl example when it needs quoting.
func shellWord(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' || r == '/') {
			return "'" + quoteSingle(s) + "'"
		}
	}
	return s
}

func quoteSingle(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			out = append(out, `'\''`...)
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}
