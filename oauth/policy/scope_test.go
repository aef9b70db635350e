package policy

import (
	"slices"
	"testing"
)

func TestParseScope_Table(t *testing.T) {
	tests := []struct {
		name    string
		s       string
		want    []string
		wantErr bool
	}{
		{"empty is default", "", []string{ScopeRead, ScopeWrite}, false},
		{"spaces only is default", "   ", []string{ScopeRead, ScopeWrite}, false},
		{"read", "memories:read", []string{ScopeRead}, false},
		{"write", "memories:write", []string{ScopeWrite}, false},
		{"both reordered", "memories:write memories:read", []string{ScopeRead, ScopeWrite}, false},
		{"duplicates", "memories:read memories:read  memories:read", []string{ScopeRead}, false},
		{"unknown", "memories:read openid", nil, true},
		{"case", "Memories:Read", nil, true},
		{"tab separated", "memories:read\tmemories:write", nil, true},
		{"comma separated", "memories:read,memories:write", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseScope(tt.s)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseScope(%q) = %v, want error", tt.s, got)
				}
				if c := CodeOf(err); c != CodeInvalidScope {
					t.Errorf("code = %q, want %q", c, CodeInvalidScope)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseScope(%q): %v", tt.s, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ParseScope(%q) = %v, want %v", tt.s, got, tt.want)
			}
		})
	}
}

func TestParseScope_DefaultNotAliased(t *testing.T) {
	got, _ := ParseScope("")
	got[0] = "changed"
	if DefaultScopes[0] != ScopeRead {
		t.Fatalf("ParseScope returned DefaultScopes itself")
	}
}

func TestCovers_Table(t *testing.T) {
	tests := []struct {
		name    string
		granted []string
		needed  string
		want    bool
	}{
		{"read covers read", []string{ScopeRead}, ScopeRead, true},
		{"read not write", []string{ScopeRead}, ScopeWrite, false},
		{"write implies read", []string{ScopeWrite}, ScopeRead, true},
		{"write covers write", []string{ScopeWrite}, ScopeWrite, true},
		{"both", []string{ScopeRead, ScopeWrite}, ScopeWrite, true},
		{"none", nil, ScopeRead, false},
		{"empty needed", []string{ScopeWrite}, "", false},
		{"unknown needed", []string{ScopeWrite}, "admin", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Covers(tt.granted, tt.needed); got != tt.want {
				t.Errorf("Covers(%v, %q) = %v, want %v", tt.granted, tt.needed, got, tt.want)
			}
		})
	}
}

func TestFormatScope(t *testing.T) {
	if got, want := FormatScope([]string{ScopeRead, ScopeWrite}), "memories:read memories:write"; got != want {
		t.Errorf("FormatScope = %q, want %q", got, want)
	}
}

func TestParseRequestScope_Table(t *testing.T) {
	for _, tc := range []struct {
		name, s string
		want    []string
		named   bool
		wantErr bool
	}{
		{"empty is default", "", []string{ScopeRead, ScopeWrite}, false, false},
		{"offline_access alone is default, not wider", "offline_access", []string{ScopeRead, ScopeWrite, ScopeOfflineAccess}, false, false},
		{"read with offline_access", "offline_access memories:read", []string{ScopeRead, ScopeOfflineAccess}, true, false},
		{"offline_access twice", "memories:write offline_access offline_access", []string{ScopeWrite, ScopeOfflineAccess}, true, false},
		{"read", "memories:read", []string{ScopeRead}, true, false},
		{"unknown", "offline_access openid", nil, false, true},
		{"case", "Offline_Access", nil, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, named, err := ParseRequestScope(tc.s)
			if tc.wantErr {
				if CodeOf(err) != CodeInvalidScope {
					t.Fatalf("ParseRequestScope(%q) = %v, %v; want invalid_scope", tc.s, got, err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) || named != tc.named {
				t.Errorf("ParseRequestScope(%q) = %v, %v, %v; want %v, %v", tc.s, got, named, err, tc.want, tc.named)
			}
			if r := ResourceScopes(got); slices.Contains(r, ScopeOfflineAccess) || len(r) != len(got)-btoi(slices.Contains(got, ScopeOfflineAccess)) {
				t.Errorf("ResourceScopes(%v) = %v", got, r)
			}
		})
	}
	if _, err := ParseScope("offline_access"); err == nil {
		t.Error("ParseScope (personal access tokens) accepts offline_access")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestTranslateScope(t *testing.T) {
	for _, tc := range []struct {
		in      string
		aliases map[string]string
		want    string
	}{
		{"mcp:tools:read mcp:tools:execute kura:notes:search", KOmcpScopeMap, "memories:read memories:read memories:read"},
		{"mcp:tools:execute  memories:write", KOmcpScopeMap, "memories:read  memories:write"},
		{"mcp:tools:read", nil, "mcp:tools:read"},
		{"MCP:TOOLS:READ", KOmcpScopeMap, "MCP:TOOLS:READ"}, // scopes are case-sensitive (RFC 6749 §3.3)
		{"", KOmcpScopeMap, ""},
	} {
		if got := TranslateScope(tc.in, tc.aliases); got != tc.want {
			t.Errorf("TranslateScope(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// What a KOmcp client gets: read, never write.
	got, _, err := ParseRequestScope(TranslateScope("mcp:tools:read mcp:tools:execute kura:notes:search", KOmcpScopeMap))
	if err != nil || FormatScope(got) != ScopeRead {
		t.Errorf("KOmcp's scopes grant %v, %v; want %s", got, err, ScopeRead)
	}
}
