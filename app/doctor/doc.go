// Package doctor is `ownsona doctor`: it checks a setup the way a hosted assistant will meet
// it and says, for each finding, what to change.
//
// The simplest use checks the local setup (the database file's permissions and the public URL,
// issuer and resource that serve derives from the configuration):
//
//	problems, err := doctor.Run(ctx, doctor.Options{DB: "ownsona.db", PublicURL: "https://mem.example.com"}, os.Stdout)
//
// With Options.Public it also checks, over the network, what Claude.ai and ChatGPT need: the
// name's A records are public IPv4 addresses, the port answers TLS with a certificate that
// the system's roots accept, both RFC 9728 protected-resource documents and the RFC 8414
// authorization-server document are served and agree with the configuration byte for byte,
// and an unauthenticated POST to the MCP endpoint is refused with 401 and an absolute
// resource_metadata URL.
//
// Each finding is one line, "ok", "warn" or "FAIL", what was found, and after " — " what to
// change. Run returns the number of FAIL lines; warnings do not count.
//
// ReadEnvFile reads a service's environment file (KEY=VALUE lines) as systemd does, so that
// the caller checks the settings the service runs with.
//
// # Caveats
//
// Doctor sees the network from where it runs. On a home network whose resolver answers
// differently from public DNS (split horizon), or whose router sends connections to its own
// public address back inside (hairpin NAT), a check can pass here and fail from outside: ask
// a public resolver (Options.LookupIP, ResolverAt) and, for certainty, run it from elsewhere.
// Every network call is bounded by Options.Timeout.
package doctor
