package app

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLayers holds the package arrows of DESIGN.md's layout: each package under app/ imports
// only what its row allows (its direct imports of this module, and a few standard packages it
// must never need), and nothing under app/ imports app. A reach across a boundary fails here,
// in make test, rather than in review.
// programsOnly are the libraries of the programs in cmd/ (the benchmarks' stores and datasets,
// driving a real serve), which the product never links.
var programsOnly = []string{"internal/anndata", "internal/corpus", "internal/serving"}

func TestLayers(t *testing.T) {
	const mod = "github.com/ownsona/ownsona/"
	allowed := map[string][]string{
		"app/memory":    {"app/memtext", "app/rank", "app/timewords", "kv", "vector"},
		"app/rank":      {"vector"},
		"app/tools":     {"app/memory", "app/memtext", "app/approval", "mcp", "jsonrpc", "oauth", "oauth/policy"},
		"app/settings":  {"app/approval", "kv"},
		"app/approval":  {},
		"app/uploads":   {"app/importers", "app/memory"},
		"app/importers": {"app/memory", "app/memtext"},
		"app/web":       {"app/limit", "app/audit", "app/certs", "oauth", "oauth/policy", "mcp", "jsonrpc"},
		"app/console":   {"app/memory", "app/memtext", "app/audit", "app/approval", "app/settings", "oauth", "oauth/grant", "oauth/policy"},
		"app/backup":    {"app/memory", "app/audit", "kv", "oauth"},
		"app/ops":       {"app/adminsock", "app/backup", "app/importers", "app/memory", "app/memtext", "app/audit", "app/certs", "app/doctor", "oauth", "oauth/grant", "oauth/login", "oauth/policy", "oauth/token", "kv"},
		"app/adminsock": {},
		"app/memtext":   {},
		"app/timewords": {},
		"app/limit":     {},
		"app/metrics":   {},
		"app/audit":     {"kv"},
		"app/doctor":    {"oauth"},
		"app/certs":     {"kv"},
		"mcp":           {"jsonrpc"},
		"jsonrpc":       {},
		"vector":        {},
		"embedhttp":     {"vector"},
		"kv":            {},
		"kv/kvtest":     {"kv"},
		// Test helpers: imported only by tests (checked below).
		"internal/httpscenario": {},
	}
	// Standard packages that would mean a package took on another's job.
	forbidden := map[string][]string{
		"app/memory":    {"net/http", "flag", "encoding/json/v2"},
		"app/tools":     {"net/http", "flag"},
		"app/approval":  {"net/http", "flag"},
		"app/uploads":   {"net/http", "flag"},
		"app/importers": {"net/http", "flag"},
		"app/settings":  {"net/http", "flag"},
		"app/ops":       {"net/http"},
		"app/adminsock": {"net/http", "flag"},
		"app/console":   {"flag", "os"},
	}
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = ".." // the module's root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := map[string]bool{}
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkg := strings.TrimPrefix(p.ImportPath, mod)
		seen[pkg] = true
		for _, imp := range p.Imports {
			ours, isOurs := strings.CutPrefix(imp, mod)
			if isOurs && strings.HasPrefix(pkg, "app/") && ours == "app" {
				t.Errorf("%s imports app: nothing under app/ may", pkg)
			}
			if isOurs && (ours == "kv/kvtest" || ours == "internal/httpscenario") {
				t.Errorf("%s imports %s: only tests may", pkg, ours)
			}
			if isOurs && strings.HasPrefix(ours, "cmd/") {
				t.Errorf("%s imports %s: a program is imported by nothing", pkg, ours)
			}
			if isOurs && slices.Contains(programsOnly, ours) && !strings.HasPrefix(pkg, "cmd/") {
				t.Errorf("%s imports %s: only the programs in cmd/ and tests may", pkg, ours)
			}
			if slices.Contains(forbidden[pkg], imp) {
				t.Errorf("%s imports %s, which is not its job (DESIGN.md, Layout)", pkg, imp)
			}
			want, ruled := allowed[pkg]
			if !ruled || !isOurs {
				continue
			}
			if !slices.Contains(want, ours) && !strings.HasPrefix(ours, pkg+"/internal") {
				t.Errorf("%s imports %s; it may import only %v of this module (DESIGN.md, Layout)", pkg, ours, want)
			}
		}
	}
	for pkg := range allowed {
		if !seen[pkg] {
			t.Errorf("package %s is in the rules but not in the module", pkg)
		}
	}
}
