package ops_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/ops"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
	"github.com/ownsona/ownsona/oauth"
	"github.com/ownsona/ownsona/oauth/login"
)

func TestPasswordSet(t *testing.T) {
	db := MustCreateDB(t, filepath.Join(t.TempDir(), "o.db"))
	t.Run("offline", func(t *testing.T) {
		out := mustRun(t, newEnv(db, "correct horse battery\n"), "password", "set")
		for _, want := range []string{"set the owner's login password of " + db, "from its next start", "OWNSONA_LOGIN_PASSWORD is set for the server, it still wins"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		k := kvtest.OpenFile(t, db, kv.Options{Migrations: memory.Migrations})
		mustVerifyOwnerPassword(t, k, "correct horse battery")
	})
	t.Run("too short", func(t *testing.T) {
		_, _, err := run(t, newEnv(db, "elevenchars\n"), "password", "set") // 11: one short of the rule of OWNSONA_LOGIN_PASSWORD
		var ue *ops.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "at least 12 characters") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("the environment's password is named", func(t *testing.T) {
		env := newEnv(db, "another long password\n")
		env.Getenv = func(k string) string {
			return map[string]string{"OWNSONA_DB": db, "OWNSONA_LOGIN_PASSWORD": "$argon2id$..."}[k]
		}
		_, errs, err := run(t, env, "password", "set")
		if err != nil || !strings.Contains(errs, "OWNSONA_LOGIN_PASSWORD is set in this environment") {
			t.Errorf("err = %v, standard error %q", err, errs)
		}
	})
}

func TestHashPassword(t *testing.T) {
	out := mustRun(t, newEnv("", "a fine passphrase\n"), "hash-password")
	v, warn, err := login.NewVerifier("owner", strings.TrimSpace(out))
	if err != nil || warn != "" || !strings.HasPrefix(out, "$argon2id$") {
		t.Fatalf("hash %q: %v %s", out, err, warn)
	}
	if ok, _ := v.Check(t.Context(), "owner", "a fine passphrase"); !ok {
		t.Error("the hash does not verify the password")
	}
}

// TestPasswordSet_Live (issue 30, item 7): with a server running, `password set` goes through
// the admin socket into it, and the new password signs in at once while the old one fails.
func TestPasswordSet_Live(t *testing.T) {
	path := filepath.Join(shortDir(t), "o.db")
	db := kvtest.OpenFile(t, path, kv.Options{Migrations: memory.Migrations})
	auth, err := oauth.New(oauth.Config{DB: db, PublicURL: "http://127.0.0.1:8080"})
	if err != nil {
		t.Fatal(err)
	}
	defer auth.Close()
	old := auth.GeneratedPassword()
	live := &ops.Live{DBPath: path, DB: db, Keys: auth.Keys(), Grants: auth.Grants(), SetOwnerPassword: auth.ReplaceOwnerPassword}
	stdio := func(context.Context, io.Reader, io.Writer) error { return nil }
	closeSocket, err := adminsock.Listen(t.Context(), live.DBPath, adminsock.Config{Commands: ops.SocketCommands(live), Stdio: stdio, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer closeSocket()

	const newPW = "a new owner passphrase"
	out := mustRun(t, newEnv(path, newPW+"\n"), "password", "set")
	if !strings.Contains(out, "signs in with it from now on") {
		t.Errorf("output does not say the server uses the new password:\n%s", out)
	}
	signIn := func(pw string) error {
		r := httptest.NewRequest(http.MethodPost, "/console/signin", nil)
		return auth.CheckOwner(httptest.NewRecorder(), r, oauth.DefaultUsername, pw)
	}
	if err := signIn(newPW); err != nil {
		t.Errorf("the new password on the running server: %v, want nil", err)
	}
	if err := signIn(old); !errors.Is(err, oauth.ErrWrongCredentials) {
		t.Errorf("the old password on the running server: %v, want ErrWrongCredentials", err)
	}
	mustVerifyOwnerPassword(t, db, newPW) // and the file holds it for the next start
}
