package oauth

import (
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
)

// TestServer_ThrottleSurvivesRestart: login throttling state lives in the file (issue 3: every
// OAuth record, login throttling state included), so restarting the server does not give a
// password guesser a fresh start. In a synctest bubble, time stands still across the restart.
func TestServer_ThrottleSurvivesRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ownsona.db")
		open := func() (*kv.DB, *Server) {
			db := kvtest.OpenFile(t, path, kv.Options{})
			s, err := New(Config{PublicURL: "https://mem.example.com", DB: db, Password: "correct horse battery staple"})
			if err != nil {
				t.Fatal(err)
			}
			return db, s
		}
		db, s := open()
		for range 5 {
			s.throttle.Allow("203.0.113.9")
		}
		if s.throttle.Allow("203.0.113.9") == 0 {
			t.Fatal("the test needs an IP that is refused before the restart")
		}
		s.Close()
		db.Close()

		db, s = open()
		defer db.Close()
		defer s.Close()
		if s.throttle.Allow("203.0.113.9") == 0 {
			t.Error("after a restart the refused IP may try again at once")
		}
	})
}
