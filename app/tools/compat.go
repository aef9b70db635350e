package tools

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ownsona/ownsona/rpc"
)

// The compatibility modes (issue 27, item 7; OWNSONA_COMPAT): each, off by default, adds what
// clients written for one of the seed systems call, so that they work unchanged. With every
// mode off, tools/list, resources/list and the templates are ownsona's alone; the modes' tools
// are unknown tools then, as to any other server. Switching a mode on or off (SetCompat) takes
// effect from the next request and tells connected clients with the list_changed
// notifications, as the allowlist does. A mode's tools and resources follow the allowlist by
// the tool of ownsona whose data they show (readsWith).
//
//   - once (seed 001): prepare_local_file_upload, ONCE's name of prepare_import_upload, with
//     its schema and behaviour.

// Compat says which compatibility modes are on; the zero Compat, none.
type Compat struct {
	// ONCE adds prepare_local_file_upload (seed 001).
	ONCE bool
}

// CompatModes are the modes' names, as OWNSONA_COMPAT lists them.
var CompatModes = []string{"once"}

// ParseCompat reads a comma-separated list of modes ("once,komcp"); empty is none.
func ParseCompat(list string) (Compat, error) {
	var c Compat
	for _, m := range strings.Split(list, ",") {
		switch m = strings.ToLower(strings.TrimSpace(m)); m {
		case "":
		case "once":
			c.ONCE = true
		default:
			return Compat{}, fmt.Errorf("%q is not a compatibility mode; the modes are %s", m, strings.Join(CompatModes, ", "))
		}
	}
	return c, nil
}

// String lists the modes that are on, as ParseCompat reads them; "" for none.
func (c Compat) String() string {
	var on []string
	for _, m := range CompatModes {
		if c.on(m) {
			on = append(on, m)
		}
	}
	return strings.Join(on, ",")
}

// on reports whether mode is on.
func (c Compat) on(mode string) bool {
	switch mode {
	case "once":
		return c.ONCE
	}
	return false
}

// compatNames are the tools, resources and templates of the modes, by mode; each follows the
// allowlist by the tool in readsWith.
var compatNames = map[string]string{
	"prepare_local_file_upload": "once",
}

// compatCatalogue is the order of the modes' tools in tools/list, after the catalogue's.
var compatCatalogue = []string{"prepare_local_file_upload"}

// shows reports whether c lets name be seen: true for anything that is not a mode's.
func (c Compat) shows(name string) bool {
	mode, ok := compatNames[name]
	return !ok || c.on(mode)
}

// Compat returns the compatibility modes in force.
func (s *Server) Compat() Compat { return *s.compat.Load() }

// SetCompat makes c the compatibility modes from the next request on, and tells connected
// clients which lists changed with it (notifications/tools/list_changed).
func (s *Server) SetCompat(c Compat) {
	s.allowMu.Lock()
	defer s.allowMu.Unlock()
	old := s.Compat()
	s.compat.Store(&c)
	allow := *s.allowlist.Load()
	for _, kind := range []string{"tools", "prompts", "resources"} {
		if !slices.Equal(shown(kind, allow, old), shown(kind, allow, c)) {
			s.RPC.NotifyListChanged(kind)
		}
	}
}

// compatTools are the modes' tools.
func (s *Server) compatTools() []*rpc.Tool {
	return []*rpc.Tool{
		newTool(s, s.prepareUploadDef("prepare_local_file_upload", "Prepare a file upload for import (ONCE's name)",
			prepareUploadDesc+" The same tool as prepare_import_upload, under the name clients written for ONCE call.")),
	}
}
