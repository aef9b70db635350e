package memtext

import (
	"encoding/base64"
	"strings"
	"testing"
)

// Every key below is fake, and each is assembled from parts so that secret scanners do not flag
// this file.

// b64 encodes s as a JWT segment.
func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

var (
	fakeJWT = b64(`{"alg":"HS256","typ":"JWT"}`) + "." + b64(`{"sub":"1234567890","name":"Test"}`) + "." +
		b64("not a real signature, only a test")
	mixed = strings.Repeat("aB3d", 30) // a random-looking key body
)

func TestDetectSecret(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"aws access key", "my aws key is AKIA" + "IOSFODNN7EXAMPLE ok", KindAWSAccessKey},
		{"aws session key", "ASIA" + "Y34FZKBOKMUTVV7A", KindAWSAccessKey},
		{"aws secret key", "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY", KindAWSSecretKey},
		{"openai project key", "openai: sk-" + "proj-" + mixed[:100], KindOpenAIKey},
		{"openai legacy key", "sk-" + mixed[:48], KindOpenAIKey},
		{"openai key with sdk-style body", "sk-" + "proj-" + strings.Repeat("Ab3", 16), KindOpenAIKey},
		{"anthropic key", "key sk-ant-" + "api03-" + mixed[:93] + "AA", KindAnthropicKey},
		{"github classic token", "token ghp_" + strings.Repeat("a1B2", 9), KindGitHubToken},
		{"github oauth token", "gho_" + strings.Repeat("Z9y8", 9), KindGitHubToken},
		{"github server token", "ghs_" + strings.Repeat("Q1w2", 9), KindGitHubToken},
		{"github fine-grained token", "github_pat_" + "11ABCDEFG0" + strings.Repeat("x1Y2", 18), KindGitHubToken},
		{"slack bot token", "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx", KindSlackToken},
		{"slack user token", "xoxp-" + "1234-5678-9012-" + strings.Repeat("ab12", 8), KindSlackToken},
		{"slack webhook", "https://hooks.slack.com/" + "services/T00000000/B00000000/" + strings.Repeat("X", 24), KindSlackWebhook},
		{"google api key", "maps key AIza" + "Sy" + strings.Repeat("A_b-9", 6) + "xyz.", KindGoogleAPIKey},
		{"google api key ending in a hyphen", "AIza" + strings.Repeat("Sy3-", 8) + "ab- is it", KindGoogleAPIKey},
		{"stripe secret key", "sk_" + "live_" + strings.Repeat("4eC3", 6), KindStripeKey},
		{"stripe restricted key", "rk_" + "test_" + strings.Repeat("4eC3", 6), KindStripeKey},
		{"jwt", "session " + fakeJWT, KindJWT},
		{"jwt as a bearer token", "Authorization: Bearer " + fakeJWT, KindJWT},
		{"pem rsa key", "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", KindPrivateKey},
		{"pem openssh key", "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA", KindPrivateKey},
		{"pem pkcs8 key", "-----BEGIN " + "PRIVATE KEY-----", KindPrivateKey},
		{"pem encrypted key", "-----BEGIN ENCRYPTED " + "PRIVATE KEY-----", KindPrivateKey},
		{"pgp key", "-----BEGIN PGP " + "PRIVATE KEY BLOCK-----", KindPrivateKey},
		{"putty key", "PuTTY-User-" + "Key-File-3: ssh-ed25519", KindPrivateKey},
		{"visa with spaces", "4111 1111 " + "1111 1111", KindCardNumber},
		{"visa in a sentence", "card 4111 1111 " + "1111 1111 expires soon", KindCardNumber},
		{"visa with hyphens", "4111-1111-" + "1111-1111", KindCardNumber},
		{"visa together", "4111111" + "111111111.", KindCardNumber},
		{"visa 13 digits", "4222222" + "222222", KindCardNumber},
		{"stripe test visa", "my card is 4242 4242 " + "4242 4242", KindCardNumber},
		{"mastercard", "5555-5555-" + "5555-4444 exp 12/28", KindCardNumber},
		{"mastercard 2-series", "2223 0031 " + "2200 3222", KindCardNumber},
		{"amex grouped", "amex 3782 822463 " + "10005", KindCardNumber},
		{"amex together", "amex 378282" + "246310005", KindCardNumber},
		{"discover", "6011 1111 " + "1111 1117", KindCardNumber},
		{"jcb", "3530 1113 " + "3330 0000", KindCardNumber},
		{"diners", "3056 930902 " + "5904", KindCardNumber},
		{"unionpay", "6200 0000 " + "0000 0005", KindCardNumber},
		{"card after other numbers", "order 1234 4111 1111 " + "1111 1111", KindCardNumber},
		{"card after a short number", "ref 12 4111111" + "111111111", KindCardNumber},
		{"card after a colon", "card:4111111" + "111111111", KindCardNumber},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind, found := DetectSecret(tc.text)
			if !found || kind != tc.want {
				t.Errorf("DetectSecret(%.24q…) = %q, %v; want %q", tc.text, kind, found, tc.want)
			}
		})
	}
}

func TestDetectSecret_NotSecrets(t *testing.T) {
	for _, tc := range []struct{ name, text string }{
		{"plain sentence", "My sister Ana lives in Lisbon and prefers tea."},
		{"prose about prefixes", "I told them the AKIA prefix marks AWS keys and sk- marks OpenAI keys"},
		{"prose about more prefixes", "GitHub tokens start with ghp_ and Slack ones with xoxb- or xoxp-; Google's with AIza."},
		{"hyphenated words after sk-", "we use sk-learn-compatible-estimators-and-pipelines-throughout"},
		{"short sk- id", "sku sk-" + "12345"},
		{"short AKIA", "AKIA" + "IOSFODNN7EXAM"},
		{"slack prose", "xoxb-tokens-are-for-bots-only"},
		{"short github token", "ghp_" + "abc123"},
		{"short google key", "AIza" + "Sy12345"},
		{"stripe publishable key", "pk_" + "live_" + strings.Repeat("4eC3", 6)},
		{"public key", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A"},
		{"certificate", "-----BEGIN CERTIFICATE-----"},
		{"private key in prose", "keep the private key file in a safe place"},
		{"jwt prose", "eyJ is how base64 JSON starts"},
		{"jwt-shaped without alg", b64(`{"typ":"JWT","kid":"1"}`) + "." + b64(`{"sub":"1"}`) + "." + b64("signature bytes")},
		{"jwt-shaped header that is not json", "eyJ" + "hello-world" + ".abcdefghij.klmnopqrst"},
		{"dotted version", "version 1.2.3 of eyJzdWIi.something.else"},
		{"order number failing luhn", "order 4111 1111 1111 1112 ships Tuesday"},
		{"all zeros", "0000 0000 0000 0000 is not a card"},
		{"luhn-valid without a card prefix", "account 1234 5678 9012 3452"},
		{"amex prefix with visa length", "3782 8224 6310 0055"},
		{"us phone", "call me at +1 415 555 0100 or (415) 555-0199"},
		{"phone numbers in a row", "415-555-0100 415-555-0199 415-555-0123"},
		{"uk phone", "+44 20 7946 0958"},
		{"german phone", "+49 30 123456789"},
		{"isbn-13 hyphenated", "ISBN 978-0-306-40615-7"},
		{"isbn-13 together", "ISBN 9780306406157"},
		{"isbn-10", "ISBN 0-306-40615-2"},
		{"uuid", "id 123e4567-e89b-12d3-a456-426614174000"},
		{"git commit sha", "commit 9fceb02d0ae598e95dc970b74767f19372d61af8"},
		{"tracking number", "my tracking number is 1Z999AA10123456784"},
		{"iban", "IBAN DE89 3704 0044 0532 0130 00"},
		{"date and time", "the meeting is at 10:30 on 2026-05-17"},
		{"unix milliseconds", "timestamp 1747480200000"},
		{"decimal", "pi is 3.14159265358979323846 roughly"},
		{"fraction digits", "rate 0.4111111111111111"},
		{"single digits", "scores 4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"},
		{"long digit run", "4111111111111111111111111"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if kind, found := DetectSecret(tc.text); found {
				t.Errorf("DetectSecret(%q) = %q, want no secret", tc.text, kind)
			}
		})
	}
}

var kinds = map[string]bool{
	KindAWSAccessKey: true, KindAWSSecretKey: true, KindAnthropicKey: true, KindOpenAIKey: true,
	KindStripeKey: true, KindGitHubToken: true, KindSlackToken: true, KindSlackWebhook: true,
	KindGoogleAPIKey: true, KindPrivateKey: true, KindJWT: true, KindCardNumber: true,
}

func FuzzDetectSecret(f *testing.F) {
	f.Add("card 4111 1111 " + "1111 1111")
	f.Add("AKIA" + "IOSFODNN7EXAMPLE")
	f.Add("sk-" + mixed[:48])
	f.Add(fakeJWT)
	f.Add("1234 4111-1111 1111-1111 12")
	f.Fuzz(func(t *testing.T, s string) {
		kind, found := DetectSecret(s)
		if found != kinds[kind] || !found && kind != "" {
			t.Fatalf("DetectSecret(%q) = %q, %v", s, kind, found)
		}
	})
}

// BenchmarkDetectSecret measures the worst inputs of the longest text: digit groups (every
// window is a card candidate) and key-like runs.
func BenchmarkDetectSecret(b *testing.B) {
	for _, bc := range []struct{ name, text string }{
		{"prose", strings.Repeat("My sister Ana lives in Lisbon and prefers tea. ", 400)[:DefaultMaxTextChars]},
		{"digit groups", strings.Repeat("4111 ", DefaultMaxTextChars/5)},
		{"key-like", strings.Repeat("sk-"+strings.Repeat("a-", 20)+" eyJ"+strings.Repeat("a", 10)+".", 200)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				DetectSecret(bc.text)
			}
		})
	}
}
