package ops_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/ops"
	"github.com/ownsona/ownsona/kv"
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
		k, err := kv.Open(db, kv.Options{Migrations: memory.Migrations})
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
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
