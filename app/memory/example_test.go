package memory_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/vector"
)

// The simplest use: open the store over a file, remember, and search by meaning.
func Example() {
	dir, _ := os.MkdirTemp("", "ownsona-example-")
	defer os.RemoveAll(dir)
	db, err := kv.Open(filepath.Join(dir, "ownsona.db"), kv.Options{Migrations: memory.Migrations})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	s, err := memory.Open(db, memory.Config{Embedder: vector.NewBuiltin()})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	ctx := context.Background()
	who := memory.Origin{Provider: "claude", Client: "stdio"}
	res, _, err := s.Remember(ctx, []memory.Draft{
		{Text: "My son lives in Los Angeles", Tags: []string{"Family"}},
		{Text: "I take my coffee black"},
		{Text: "my aws key is AKIAIOSFODNN7EXAMPLE"},
	}, who)
	if err != nil {
		panic(err)
	}
	for _, r := range res {
		fmt.Println(r.ID, r.Err)
	}
	found := s.Search(ctx, memory.Query{Text: "where is my son these days?", Limit: 1})
	fmt.Println(found.Matches[0].Memory.Text, found.Matches[0].Memory.Tags)
	// Output:
	// 1 <nil>
	// 2 <nil>
	// 0 text looks like a secret (aws-access-key) and was not stored; remember a description of it instead
	// My son lives in Los Angeles [family]
}
