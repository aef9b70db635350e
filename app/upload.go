package app

// The wiring of large imports (app/uploads): the import tools and the HTTP upload route
// reach the same service through the small interfaces they declare.

import (
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/tools"
	"github.com/ownsona/ownsona/app/uploads"
	"github.com/ownsona/ownsona/app/web"
)

// uploadTools is tools.Uploads over the service.
type uploadTools struct{ svc *uploads.Service }

var _ tools.Uploads = uploadTools{}

func (u uploadTools) PrepareUpload(owner, name, filename, format string) (string, string, time.Time, int64, error) {
	t, err := u.svc.Prepare(uploads.Owner{Key: owner, Name: name}, filename, format)
	return t.URL, t.Token, t.ExpiresAt, t.MaxBytes, err
}

func (u uploadTools) ImportJobs(owner string) []memory.ImportJob { return u.svc.Jobs(owner) }

func (u uploadTools) ImportJob(owner, id string) (memory.ImportJob, bool) {
	return u.svc.Job(owner, id)
}

// uploadReceiver is web.UploadReceiver over the service.
type uploadReceiver struct{ svc *uploads.Service }

var _ web.UploadReceiver = uploadReceiver{}

func (u uploadReceiver) Begin(id, token string) (int64, func(), error) {
	return u.svc.Begin(id, token)
}

func (u uploadReceiver) Receive(id, token string, body [][]byte) (any, error) {
	return u.svc.Receive(id, token, body)
}

// Uploads is the service of large imports: upload URLs and the imports they started.
func (a *App) Uploads() *uploads.Service { return a.uploads }
