package memtext

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
)

// secretPatterns are credential shapes, each with a name. Go's regexp is RE2: linear in the
// input, whatever it holds.
var secretPatterns = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"aws-access-key", regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)},
	{"aws-secret-key", regexp.MustCompile(`(?i)aws_?secret_?access_?key\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}\b`)},
	{"anthropic-key", regexp.MustCompile(`\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{20,}`)},
	{"openai-key", regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`)},
	{"github-token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b`)},
	{"slack-token", regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},
	{"slack-webhook", regexp.MustCompile(`https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}`)},
	{"google-api-key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{"stripe-key", regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b`)},
	{"private-key", regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`)},
}

var (
	jwtShape  = regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)
	cardShape = regexp.MustCompile(`\b\d(?:[ -]?\d){12,18}\b`)
)

// DetectSecret reports whether text looks like a credential that must not be stored, and its
// kind: cloud and API keys (AWS, OpenAI, Anthropic, GitHub, Slack, Google, Stripe), JWTs, PEM
// private keys, and Luhn-valid payment card numbers with a card network's prefix. It never
// returns the secret itself.
func DetectSecret(text string) (kind string, found bool) {
	for _, p := range secretPatterns {
		if p.re.MatchString(text) {
			return p.kind, true
		}
	}
	for _, m := range jwtShape.FindAllString(text, -1) {
		if isJWT(m) {
			return "jwt", true
		}
	}
	for _, m := range cardShape.FindAllString(text, -1) {
		if isCardNumber(m) {
			return "card-number", true
		}
	}
	return "", false
}

// isJWT reports whether s's first segment decodes to a JSON header with "alg".
func isJWT(s string) bool {
	head, _, _ := strings.Cut(s, ".")
	b, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return false
	}
	var h map[string]any
	if json.Unmarshal(b, &h) != nil {
		return false
	}
	_, ok := h["alg"]
	return ok
}

// isCardNumber checks a digit run (single spaces or hyphens allowed between digits) for a card
// length, a network prefix and the Luhn checksum.
func isCardNumber(s string) bool {
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
	n := len(digits)
	if n < 13 || n > 19 || !cardPrefix(digits) {
		return false
	}
	sum := 0
	for i := 0; i < n; i++ {
		d := int(digits[n-1-i] - '0')
		if i%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// cardPrefix reports whether digits start with a major card network's issuer prefix.
func cardPrefix(d string) bool {
	p2 := atoi(d[:2])
	p4 := atoi(d[:4])
	switch {
	case d[0] == '4': // Visa
		return true
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720: // Mastercard
		return true
	case p2 == 34 || p2 == 37: // American Express
		return true
	case strings.HasPrefix(d, "6011"), p2 == 65, p4 >= 6440 && p4 <= 6499: // Discover
		return true
	case p4 >= 3528 && p4 <= 3589: // JCB
		return true
	case p2 == 36 || p2 == 38 || p2 == 39 || p4 >= 3000 && p4 <= 3059: // Diners Club
		return true
	case p2 == 62: // UnionPay
		return true
	}
	return false
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
