// Package memtext decides what a memory may hold: its text, its tags, and whether the text looks
// like a credential that must never be stored. It is the trust boundary for the words a model
// sends: every tool that writes or filters memories passes its arguments through here first.
//
// The simplest use, as the remember tool does it:
//
//	text, err := memtext.NormalizeText(args.Text, 16000)
//	if err != nil { ... }                      // *InputError: field and a reason a model can act on
//	if kind, found := memtext.DetectSecret(text); found {
//		... // SECRET_REJECTED, naming kind ("aws-access-key", "card-number", ...), never the secret
//	}
//	tags, err := memtext.ParseTags(args.Tags) // raw JSON: null, ["a","b"] or "a, b"
//
// # Text
//
// NormalizeText keeps line structure but not layout. Within a line, every run of Unicode
// whitespace (spaces, tabs, no-break spaces, ideographic spaces) becomes one space. Every run of
// line breaks, including blank lines and the whitespace around them, becomes one "\n": a memory
// keeps its list items and paragraphs on separate lines but never holds a blank line. CR LF, a
// lone CR, U+2028 and U+2029 count as line breaks. A byte order mark (U+FEFF) is dropped. The
// result is trimmed. Invalid UTF-8 and control characters other than tab, CR and LF (NUL, form
// feed, vertical tab, the C1 range) are refused rather than dropped, so nothing the user wrote
// is silently lost. The length limit counts characters (runes) after normalization.
//
// # Tags
//
// A tag is 2 to 64 characters of [a-z0-9] in hyphen-separated words: it matches
// ^[a-z0-9]+(-[a-z0-9]+)*$. NormalizeTag lowercases, folds full-width ASCII and the common Latin
// accents and ligatures ("Café" → "cafe", "Straße" → "strasse", "Łódź" → "lodz"), turns runs of
// whitespace, underscores and hyphens into one hyphen, and removes every other character (so
// "node.js" → "nodejs"; letters of other scripts are removed too). Leading and trailing hyphens
// go. Then a small synonym map folds common variants onto one tag, mostly plurals and
// abbreviations onto the singular:
//
//	fam, families                        → family
//	kid, kids, children                  → child
//	friends                              → friend
//	pets                                 → pet
//	hobbies                              → hobby
//	pref, prefs, preferences             → preference
//	bday, birthdays                      → birthday
//	job, jobs                            → work
//	medical                              → health
//	to-do, todos                         → todo
//	trips, travels, traveling, travelling → travel
//	recipes                              → recipe
//	goals                                → goal
//
// The map applies to whole tags only ("kids-school" stays as it is), and no synonym's target is
// itself a synonym, so normalizing a normalized tag returns it unchanged.
//
// ParseTags accepts the raw JSON of a "tags" argument: absent or null (no tags), an array of
// strings, or one string of comma-separated tags. Commas separate tags inside array elements too
// (["food, coffee"] is two tags), and blank items are skipped (["", " "] and ", ," are no tags).
// Tags are deduplicated after normalization in first-seen order; at most 32 distinct tags.
// Errors name the field as a JSON path: "tags[3]" for the fourth array element, "tags" for the
// argument as a whole or for an item of a comma-separated string (the reason quotes the item).
//
// # Secrets
//
// DetectSecret looks for credentials by shape: AWS access key ids (and AWS secret keys next to
// their variable name), OpenAI, Anthropic, Stripe, GitHub, Slack and Google API keys, Slack
// webhooks, JWTs whose header decodes to JSON with "alg", PEM and PuTTY private keys, and payment
// card numbers. A card number is 13 to 19 digits, written together or in groups (the first of 4
// digits, the others of 3 to 6) separated by single spaces or hyphens, with a card network's
// prefix and length (Visa, Mastercard, American Express, Discover, JCB, Diners Club, UnionPay,
// Mir) and a valid Luhn checksum. Prose that mentions a prefix ("keys start with sk-") is not a
// secret; bare key prefixes must be followed by a key-shaped body.
//
// # Caveats
//
// Every function is pure and safe for concurrent use. DetectSecret runs in time
// linear in its input (Go's regexp is RE2) and returns only a kind from a fixed set, never the
// matched text, so its result can be logged and shown to the client. Detection is a heuristic
// against accidental pasting, not a guarantee: a key split by spaces or described in words passes,
// and about one in ten 16-digit numbers that start with 4 pass the Luhn check. Error reasons
// quote a rejected tag (shortened to 40 characters) but never the text.
package memtext
