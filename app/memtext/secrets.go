package memtext

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
)

// Secret kinds that DetectSecret reports.
const (
	KindAWSAccessKey = "aws-access-key"
	KindAWSSecretKey = "aws-secret-key" // only next to its variable name, as in a credentials file
	KindAnthropicKey = "anthropic-key"
	KindOpenAIKey    = "openai-key"
	KindStripeKey    = "stripe-key" // secret and restricted keys; publishable pk_ keys are not secrets
	KindGitHubToken  = "github-token"
	KindSlackToken   = "slack-token"
	KindSlackWebhook = "slack-webhook"
	KindGoogleAPIKey = "google-api-key"
	KindPrivateKey   = "private-key"
	KindJWT          = "jwt"
	KindCardNumber   = "card-number"
)

const (
	cardMinDigits = 13
	cardMaxDigits = 19
)

// shapes are credentials recognized by their shape alone, checked in order: a more specific
// prefix comes before a more general one (sk-ant- before sk-). A shape's regexp runs only when
// the text holds one of its needles (in lower case when fold is set), which keeps ordinary text
// fast. Go's regexp is RE2: matching is linear in the input, whatever it holds.
var shapes = []struct {
	kind    string
	needles []string
	fold    bool
	re      *regexp.Regexp
}{
	{KindPrivateKey, []string{"PRIVATE KEY", "PuTTY-User-Key-File-"}, false,
		regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d+: `)},
	{KindAWSAccessKey, []string{"AKIA", "ASIA", "ABIA", "ACCA"}, false,
		regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{KindAWSSecretKey, []string{"secret"}, true,
		regexp.MustCompile(`(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?[A-Za-z0-9/+]{40}(?:[^A-Za-z0-9/+=]|$)`)},
	{KindAnthropicKey, []string{"sk-ant-"}, false,
		regexp.MustCompile(`\bsk-ant-[a-z]+\d{2}-[A-Za-z0-9_-]{32,}`)},
	{KindStripeKey, []string{"_live_", "_test_"}, false,
		regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b`)},
	{KindGitHubToken, []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, false,
		regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{36,})\b`)},
	{KindSlackToken, []string{"xox"}, false,
		regexp.MustCompile(`\bxox[abprs]-\d+-[A-Za-z0-9-]{8,}`)},
	{KindSlackWebhook, []string{"hooks.slack.com"}, false,
		regexp.MustCompile(`https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}`)},
	{KindGoogleAPIKey, []string{"AIza"}, false,
		regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}(?:[^0-9A-Za-z_-]|$)`)},
}

var (
	// openAIShape finds sk- keys; the body (group 1) must also look random, so that prose such
	// as "sk-learn-compatible-estimators" passes.
	openAIShape = regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?([A-Za-z0-9_-]{32,})`)
	// jwtShape finds three base64url segments; the header must also decode to JSON with "alg".
	jwtShape = regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)
)

// DetectSecret reports whether text looks like a credential that must not be stored, and its
// kind: one of the Kind constants. It never returns or logs the secret itself, and runs in time
// linear in len(text). The package doc lists what is recognized and the limits of the heuristic.
func DetectSecret(text string) (kind string, found bool) {
	var lower string
	for _, s := range shapes {
		haystack := text
		if s.fold {
			if lower == "" {
				lower = strings.ToLower(text)
			}
			haystack = lower
		}
		if containsAny(haystack, s.needles) && s.re.MatchString(text) {
			return s.kind, true
		}
	}
	if strings.Contains(text, "sk-") {
		for _, m := range openAIShape.FindAllStringSubmatchIndex(text, -1) {
			if looksRandom(text[m[2]:m[3]]) {
				return KindOpenAIKey, true
			}
		}
	}
	if strings.Contains(text, "eyJ") {
		for _, m := range jwtShape.FindAllString(text, -1) {
			if isJWT(m) {
				return KindJWT, true
			}
		}
	}
	for start := 0; start < len(text); {
		end := digitRunEnd(text, start)
		if end == start {
			start++
			continue
		}
		if hasCardNumber(text, start, end) {
			return KindCardNumber, true
		}
		start = end
	}
	return "", false
}

func containsAny(s string, needles []string) bool {
	for _, n := range needles {
		if strings.Contains(s, n) {
			return true
		}
	}
	return false
}

// digitRunEnd returns the end of the run of digit groups, separated by single spaces or
// hyphens, that starts at text[start]; start itself when text[start] is not a digit.
func digitRunEnd(text string, start int) int {
	end := start
	for i := start; i < len(text); i++ {
		switch c := text[i]; {
		case isDigit(c):
			end = i + 1
		case (c == ' ' || c == '-') && i == end && end > start && i+1 < len(text) && isDigit(text[i+1]):
			// a single separator between two digits
		default:
			return end
		}
	}
	return end
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// looksRandom reports whether a key body mixes upper case, lower case and digits and is not
// mostly hyphenated words.
func looksRandom(s string) bool {
	var upper, lower, digit, sep int
	for _, c := range []byte(s) {
		switch {
		case c >= 'A' && c <= 'Z':
			upper++
		case c >= 'a' && c <= 'z':
			lower++
		case c >= '0' && c <= '9':
			digit++
		default:
			sep++
		}
	}
	return upper > 0 && lower > 0 && digit > 0 && sep*8 <= len(s)
}

// isJWT reports whether the first segment of s decodes to a JSON object with "alg".
func isJWT(s string) bool {
	head, _, _ := strings.Cut(s, ".")
	b, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return false
	}
	var h map[string]json.RawMessage
	if json.Unmarshal(b, &h) != nil {
		return false
	}
	_, ok := h["alg"]
	return ok
}

// hasCardNumber reports whether text[start:end], a run of digit groups separated by single
// spaces or hyphens, holds a card number: one group of 13 to 19 digits, or consecutive groups
// (the first of 4 digits, the others of 3 to 6) with 13 to 19 digits in all, that pass
// isCardNumber. A group joined to a letter, or to a decimal point or comma followed by a digit,
// belongs to a longer token and is skipped.
func hasCardNumber(text string, start, end int) bool {
	if end-start < cardMinDigits {
		return false
	}
	groups := strings.FieldsFunc(text[start:end], func(r rune) bool { return r == ' ' || r == '-' })
	if joined(text, start-1, -1) {
		groups = groups[1:]
	}
	if len(groups) > 0 && joined(text, end, 1) {
		groups = groups[:len(groups)-1]
	}
	var digits [cardMaxDigits]byte
	for i, g := range groups {
		if len(g) >= cardMinDigits && len(g) <= cardMaxDigits && isCardNumber(g) {
			return true
		}
		if len(g) != 4 {
			continue
		}
		n := copy(digits[:], g)
		for _, h := range groups[i+1:] {
			if len(h) < 3 || len(h) > 6 || n+len(h) > cardMaxDigits {
				break
			}
			n += copy(digits[n:], h)
			if n >= cardMinDigits && isCardNumber(string(digits[:n])) {
				return true
			}
		}
	}
	return false
}

// joined reports whether text[i] (looking outward in direction dir from a digit run) joins the
// run to a longer token: a letter or underscore, or a '.' or ',' with a digit beyond it.
func joined(text string, i, dir int) bool {
	if i < 0 || i >= len(text) {
		return false
	}
	c := text[i]
	switch {
	case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_':
		return true
	case c == '.' || c == ',':
		j := i + dir
		return j >= 0 && j < len(text) && text[j] >= '0' && text[j] <= '9'
	}
	return false
}

// isCardNumber reports whether digits, 13 to 19 ASCII digits, has a card network's prefix and
// length and passes the Luhn checksum.
func isCardNumber(digits string) bool {
	return cardNetwork(digits) && luhn(digits)
}

// cardNetwork reports whether digits starts with the issuer prefix of a major card network and
// has a length that network issues.
func cardNetwork(d string) bool {
	n := len(d)
	p2, p3, p4 := atoi(d[:2]), atoi(d[:3]), atoi(d[:4])
	switch {
	case d[0] == '4': // Visa
		return n == 13 || n == 16 || n == 19
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720: // Mastercard
		return n == 16
	case p2 == 34 || p2 == 37: // American Express
		return n == 15
	case p4 == 6011, p3 >= 644 && p3 <= 649, p2 == 65: // Discover
		return n >= 16
	case p4 >= 3528 && p4 <= 3589: // JCB
		return n >= 16
	case p3 >= 300 && p3 <= 305, p4 == 3095, p2 == 36, p2 == 38, p2 == 39: // Diners Club
		return n >= 14
	case p2 == 62: // UnionPay
		return n >= 16
	case p4 >= 2200 && p4 <= 2204: // Mir
		return n == 16
	}
	return false
}

// luhn reports whether digits passes the Luhn (mod 10) checksum.
func luhn(digits string) bool {
	sum := 0
	for i := range len(digits) {
		d := int(digits[len(digits)-1-i] - '0')
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

func atoi(s string) int {
	n := 0
	for _, c := range []byte(s) {
		n = n*10 + int(c-'0')
	}
	return n
}
