package doctor

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestReadEnvFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ownsona.env")
	text := "# settings\n; also a comment\n\n" +
		"OWNSONA_TLS=acme\n" +
		"  OWNSONA_DOMAIN = mem.example.com  \n" +
		"OWNSONA_LOGIN_PASSWORD='$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA'\n" +
		"OWNSONA_LOGIN_USERNAME=\"me \\\"the owner\\\" \\q\"\n" +
		"OWNSONA_EMBED_URL=http://localhost:11434/v1\\ x\n" +
		"OWNSONA_TOOLS=recall,remember # not a comment\n" +
		"no equals sign\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadEnvFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"OWNSONA_TLS":            "acme",
		"OWNSONA_DOMAIN":         "mem.example.com",
		"OWNSONA_LOGIN_PASSWORD": "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA",
		"OWNSONA_LOGIN_USERNAME": `me "the owner" \q`,
		"OWNSONA_EMBED_URL":      "http://localhost:11434/v1 x",
		"OWNSONA_TOOLS":          "recall,remember # not a comment",
	}
	if len(got) != len(want) {
		t.Errorf("got %d variables %q, want %d", len(got), got, len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, err := ReadEnvFile(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
