// Package settings keeps the settings the owner may change while the server runs, in the one
// database file: the tool allowlist, the approval policy and its timeout, the rate limit and
// burst, and the compatibility modes for clients written for other systems. Flags and OWNSONA_* environment variables still win: a setting given by either
// is fixed for the life of the process, and Set refuses to change it, naming the flag or the
// variable.
//
// The simplest use, as app wires it:
//
//	st, err := settings.Open(db, settings.Config{
//		Base:       settings.Settings{Approval: "hard-delete", ApprovalTimeout: 2 * time.Minute, RateLimit: 120, RateBurst: 20},
//		Fixed:      map[string]string{settings.Tools: "OWNSONA_TOOLS"}, // Base.Tools came from there
//		KnownTools: tools.Names(),
//	})
//	st.OnChange(func(s settings.Settings) { srv.SetAllowlist(s.Tools) })
//	now := st.Get()                                  // the values in force
//	s := now
//	s.Approval = "writes"
//	err = st.Set(ctx, s) // validated, stored in one transaction, then the hooks run
//
// # Which value is in force
//
// For each setting, in order: the value of Config.Base when Config.Fixed names the setting
// (a flag or an environment variable gave it); else the value stored by Set; else Base's
// value, the default. Set stores only the settings that differ from Base, so a setting put
// back to its default follows the default again, and one later fixed by a flag comes back
// from the file when the flag is dropped.
//
// # The record
//
// One key, "runtime", in the bucket "settings": a JSON object holding the stored settings
// only ({"approval":"writes","rate_limit":60}), durations in Go's notation ("90s"). A value
// that no longer validates (a tool renamed by an upgrade) fails Open with an error naming the
// setting, unless a flag or variable overrides it.
//
// # Caveats
//
// A Store is safe for concurrent use. OnChange hooks run after the transaction commits, in the
// goroutine that called Set, one Set at a time and in registration order; they must not call
// Set. The store caches the record: do not write to the bucket from elsewhere while it is
// open.
package settings
