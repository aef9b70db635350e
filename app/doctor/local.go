package doctor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/ownsona/ownsona/oauth"
)

// boltMagic is the magic number in a bbolt file's meta pages (bbolt's internal/common/types.go),
// little-endian on every platform ownsona ships for; it follows the 16-byte page header.
const boltMagic = 0xED0CDAED

// checkFile checks the database file and its directory: that they exist, that only their owner
// may read the file and replace it, and that it is a bbolt file.
func (c *checker) checkFile() {
	path := c.o.DB
	if path == "" {
		c.report(fail, "no database path", "set --db or OWNSONA_DB to the file serve uses")
		return
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	c.checkDir(filepath.Dir(path))
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.report(warn, fmt.Sprintf("db %s does not exist yet", path),
			"serve creates it on its first start; if you expected a file here, check --db or OWNSONA_DB (doctor must name the file serve uses)")
		return
	case err != nil:
		c.report(fail, fmt.Sprintf("db %s: %v", path, err), "run doctor as the user that runs serve, e.g. sudo -u ownsona ownsona doctor")
		return
	case fi.IsDir():
		c.report(fail, fmt.Sprintf("db %s is a directory", path), fmt.Sprintf("--db names the file, e.g. %s", filepath.Join(path, "ownsona.db")))
		return
	}
	facts := []string{formatSize(fi.Size())}
	bad := false
	if runtime.GOOS != "windows" {
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			c.report(fail, fmt.Sprintf("db %s has mode %04o: other users of this machine can read your memories, tokens and signing keys", path, perm),
				fmt.Sprintf("chmod 600 %s", path))
			bad = true
		} else {
			facts = append(facts, fmt.Sprintf("mode %04o", perm))
		}
		if uid, ok := fileOwner(fi); ok {
			me := os.Geteuid()
			facts = append(facts, "owner "+userName(uid))
			switch {
			case uid != me && me != 0:
				c.report(warn, fmt.Sprintf("db %s belongs to %s, not to you (%s)", path, userName(uid), userName(me)),
					fmt.Sprintf("run doctor as the user that runs serve: sudo -u %s ownsona doctor", userName(uid)))
				bad = true
			case uid == 0:
				if d, err := os.Stat(filepath.Dir(path)); err == nil {
					if duid, ok := fileOwner(d); ok && duid != 0 {
						c.report(warn, fmt.Sprintf("db %s belongs to root but its directory to %s: a service running as %s cannot open it", path, userName(duid), userName(duid)),
							fmt.Sprintf("sudo chown %s: %s", userName(duid), path))
						bad = true
					}
				}
			}
		}
	}
	if msg := c.checkMagic(path, fi.Size()); msg != "" {
		c.report(fail, fmt.Sprintf("db %s %s", path, msg), "check --db names ownsona's file; if it does, restore the latest backup")
		return
	}
	if c.o.FileSizeWarning != nil {
		if msg := c.o.FileSizeWarning(fi.Size()); msg != "" {
			c.report(warn, fmt.Sprintf("db %s is %s", path, formatSize(fi.Size())), msg)
		}
	}
	if !bad {
		c.okf("db %s (%s)", path, strings.Join(facts, ", "))
	}
}

// checkMagic reads the first meta page's magic number; "" when it is bbolt's.
func (c *checker) checkMagic(path string, size int64) string {
	if size == 0 {
		return "is empty"
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("cannot be read: %v", err)
	}
	defer f.Close()
	var head [20]byte
	if _, err := io.ReadFull(f, head[:]); err != nil || binary.LittleEndian.Uint32(head[16:]) != boltMagic {
		return "is not a bbolt database (or its first page is damaged)"
	}
	return ""
}

// checkDir checks that the database's directory exists and that no other user may replace
// the file in it.
func (c *checker) checkDir(dir string) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.report(fail, fmt.Sprintf("directory %s does not exist", dir), fmt.Sprintf("create it for the user that runs serve: sudo install -d -o ownsona -m 0700 %s", dir))
		return
	case err != nil:
		c.report(fail, fmt.Sprintf("directory %s: %v", dir, err), "run doctor as the user that runs serve")
		return
	case runtime.GOOS == "windows":
		return
	}
	switch perm := fi.Mode().Perm(); {
	case perm&0o002 != 0:
		c.report(fail, fmt.Sprintf("directory %s (mode %04o) is writable by every user: anyone may replace or delete the database", dir, perm),
			"keep the file in a directory of its own: sudo install -d -o ownsona -m 0700 /var/lib/ownsona, and move it there with the server stopped")
	case perm&0o020 != 0:
		c.report(warn, fmt.Sprintf("directory %s (mode %04o) is writable by its group", dir, perm), fmt.Sprintf("chmod g-w %s, unless that group is yours alone", dir))
	}
}

// site is the public origin serve derives from the configuration.
type site struct {
	url      *url.URL
	host     string // lowercase, without the port
	port     string // the port to dial: the URL's, or 443 for https
	issuer   string
	resource string
	https    bool
}

// checkConfig checks that the public URL is an origin hosted assistants can use and that the
// issuer and resource agree with it; ok reports whether the origin is usable for the network
// checks.
func (c *checker) checkConfig() (s site, usable bool) {
	raw := c.o.PublicURL
	if raw == "" {
		what := "public URL not set: serve answers on loopback only (Claude Desktop, Claude Code, Cursor)"
		fix := "for Claude.ai and ChatGPT set OWNSONA_DOMAIN=mem.example.com with --tls acme, or OWNSONA_PUBLIC_URL=https://… behind a tunnel or proxy"
		if c.o.Public {
			c.report(fail, what, fix)
		} else {
			c.report(pass, what, fix)
		}
		return s, false
	}
	u, err := url.Parse(raw)
	if err != nil {
		c.report(fail, fmt.Sprintf("public URL %q does not parse: %v", raw, err), "write an origin such as https://mem.example.com")
		return s, false
	}
	host := u.Hostname()
	loopback := isLoopbackHost(host)
	switch {
	case u.Host == "" || u.Opaque != "":
		c.report(fail, fmt.Sprintf("public URL %q has no host", raw), "write an origin such as https://mem.example.com")
		return s, false
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.Contains(raw, "#"):
		c.report(fail, fmt.Sprintf("public URL %s has a user, query or fragment", raw), "write only the origin, such as https://mem.example.com")
		return s, false
	case u.Path != "" && u.Path != "/":
		c.report(fail, fmt.Sprintf("public URL %s has the path %s: the OAuth issuer is an origin and the MCP endpoint is /mcp at its root", raw, u.Path),
			"serve ownsona at the root of a (sub)domain of its own, e.g. https://mem.example.com, not under a path of another site")
		return s, false
	case strings.EqualFold(u.Scheme, "http") && loopback:
		if c.o.Public {
			c.report(fail, fmt.Sprintf("public URL %s is a loopback address: hosted assistants cannot reach it", raw),
				"set OWNSONA_DOMAIN with --tls acme, or OWNSONA_PUBLIC_URL to the https URL of your tunnel or proxy")
			return s, false
		}
	case !strings.EqualFold(u.Scheme, "https"):
		c.report(fail, fmt.Sprintf("public URL %s is not https: Claude.ai and ChatGPT connect only over https, and serve accepts http only on loopback", raw),
			fmt.Sprintf("use https://%s with --tls acme, or a tunnel or proxy that terminates TLS", u.Host))
		return s, false
	}
	ep, err := oauth.NewEndpoints(raw)
	if err != nil {
		c.report(fail, fmt.Sprintf("public URL %s: %v", raw, err), "write an origin such as https://mem.example.com")
		return s, false
	}
	if written := strings.TrimSuffix(raw, "/"); written != ep.Issuer || strings.HasSuffix(raw, "/") {
		c.report(warn, fmt.Sprintf("public URL is written %s; serve uses %s", raw, ep.Issuer),
			fmt.Sprintf("write it as %s, and give connectors exactly %s: they compare the issuer byte for byte", ep.Issuer, ep.Resource))
	}
	if strings.HasSuffix(host, ".") {
		c.report(warn, fmt.Sprintf("public URL host %s ends with a dot", host), "write the name without the final dot")
	}
	if c.o.Issuer != "" && c.o.Issuer != ep.Issuer {
		c.report(fail, fmt.Sprintf("issuer %s is not the public URL's origin %s", c.o.Issuer, ep.Issuer),
			"clients refuse an authorization server whose issuer differs from where they found it: make the issuer the public origin, with no path or trailing slash")
	}
	if c.o.Resource != "" && c.o.Resource != ep.Resource {
		c.report(fail, fmt.Sprintf("resource %s is not the public URL + /mcp (%s)", c.o.Resource, ep.Resource),
			"tokens are bound to the resource (RFC 8707): make it the public origin + /mcp, with no trailing slash")
	}
	s = site{url: u, host: strings.ToLower(strings.TrimSuffix(host, ".")), port: u.Port(), issuer: ep.Issuer, resource: ep.Resource,
		https: strings.EqualFold(u.Scheme, "https")}
	if s.port == "" {
		s.port = "443"
		if !s.https {
			s.port = "80"
		}
	}
	c.okf("public URL %s: issuer %s, resource %s", raw, ep.Issuer, ep.Resource)
	c.checkTLSMode(s, loopback)
	return s, true
}

// checkTLSMode checks that --tls and --domain fit the public URL.
func (c *checker) checkTLSMode(s site, loopback bool) {
	switch c.o.TLS {
	case "acme":
		if !slices.ContainsFunc(c.o.Domains, func(d string) bool { return strings.EqualFold(strings.TrimSuffix(d, "."), s.host) }) {
			c.report(fail, fmt.Sprintf("--tls acme gets certificates for %s, but the public URL's host is %s", strings.Join(c.o.Domains, ", "), s.host),
				fmt.Sprintf("add %s to OWNSONA_DOMAIN (or fix OWNSONA_PUBLIC_URL)", s.host))
			return
		}
		c.okf("tls acme: certificates for %s", strings.Join(c.o.Domains, ", "))
	case "local":
		if loopback {
			c.okf("tls local: certificates from ownsona's own authority")
			return
		}
		c.report(warn, fmt.Sprintf("tls local: the certificate for %s comes from ownsona's own authority, which only devices that import /ca.crt trust", s.host),
			"for Claude.ai and ChatGPT use --tls acme, or --tls off behind a tunnel or proxy with a public certificate")
	case "files":
		c.okf("tls files: serve uses the certificate files given (doctor --public checks what it serves)")
	case "off":
		switch {
		case !s.https || loopback:
		case len(c.o.TrustedProxies) == 0:
			c.report(fail, fmt.Sprintf("tls off behind a proxy or tunnel for %s, but no --trusted-proxies: every request seems to come from the proxy, so the whole internet shares one rate limit and one sign-in throttle, and one attacker blocks every refresh and sign-in", s.host),
				ProxyFix)
		default:
			c.okf("tls off: a reverse proxy or tunnel terminates HTTPS for %s; X-Forwarded-For trusted from %s", s.host, strings.Join(c.o.TrustedProxies, ", "))
		}
	default:
		c.report(fail, fmt.Sprintf("tls %q is not a mode", c.o.TLS), "use off, local, acme or files")
	}
}

// ProxyFix says how to name the proxy, for doctor's finding and serve's warning alike.
const ProxyFix = "set --trusted-proxies (OWNSONA_TRUSTED_PROXIES) to the proxy's address, e.g. 127.0.0.1/32,::1/128 for cloudflared, Tailscale Funnel or Caddy on this host"

// ProxyWarning is serve's warning at start for the configuration doctor fails (see
// checkTLSMode), or "" when there is nothing to warn of.
func ProxyWarning(publicURL, tlsMode string, trustedProxies []string) string {
	u, err := url.Parse(publicURL)
	if err != nil || u.Scheme != "https" || isLoopbackHost(u.Hostname()) || (tlsMode != "" && tlsMode != "off") || len(trustedProxies) > 0 {
		return ""
	}
	return "the public URL is https but TLS is off and no trusted proxy is set: behind a proxy or tunnel every client shares one rate limit and one sign-in throttle; " + ProxyFix
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func formatSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// userName is the login name of uid, or "uid N" when it has none.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return u.Username
	}
	return fmt.Sprintf("uid %d", uid)
}
