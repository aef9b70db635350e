package vector

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"unicode"
	"unicode/utf8"
)

// Model2Vec is an Embedder reading a model2vec static embedding model (Tulkens and van
// Dongen's model2vec; the POTION models such as potion-base-8M) from a directory holding:
//
//   - model.safetensors: a tensor named "embeddings" of shape [vocabulary, dimension], dtype
//     F32, F16 or I8 (safetensors: an 8-byte little-endian header length, a JSON header naming
//     each tensor's dtype, shape and data offsets, then the data);
//   - tokenizer.json: a Hugging Face tokenizer whose model is BERT WordPiece (vocab, unk_token,
//     continuing_subword_prefix "##", max_input_chars_per_word) and whose normalizer lowercases
//     or not (BertNormalizer, or a Sequence with Lowercase);
//   - config.json: its "normalize" flag (false when absent).
//
// A text is normalized (control characters dropped; lowercased and accents stripped when the
// tokenizer says so), split on whitespace and punctuation (each punctuation mark and each CJK
// character a word of its own), and each word cut into the longest word pieces the vocabulary
// has, greedily from the left. A word that cannot be cut, or is longer than
// max_input_chars_per_word, is the unknown token, which model2vec leaves out. The first 512
// tokens count, as in model2vec. The text's vector is the mean of its tokens' rows,
// L2-normalized if config.json says so; a text with no known token gets the zero vector.
//
// The whole matrix is held in memory as float32 (4 bytes × vocabulary × dimension: 30 MB for
// potion-base-8M). Safe for concurrent use; the vectors Embed returns belong to the caller.
type Model2Vec struct {
	info      Info
	vocab     map[string]int32
	unk       int32 // -1: none
	prefix    string
	maxChars  int
	lowercase bool
	strip     bool // strip accents
	normalize bool
	dim       int
	emb       []float32 // row r is emb[r*dim : (r+1)*dim]
}

var _ Embedder = (*Model2Vec)(nil)

// model2vecMaxTokens is how many tokens of a text count, as model2vec's encode does by default.
const model2vecMaxTokens = 512

// NewModel2Vec loads the model in dir. Its errors name the file and what is wrong with it.
// Info's Model is the directory's name and the first 8 hex digits of the SHA-256 of
// model.safetensors (e.g. "potion-base-8M@1a2b3c4d"), so that replacing the model re-embeds.
func NewModel2Vec(dir string) (*Model2Vec, error) {
	m := &Model2Vec{unk: -1}
	tokPath := filepath.Join(dir, "tokenizer.json")
	tokData, err := os.ReadFile(tokPath)
	if err != nil {
		return nil, fmt.Errorf("model2vec: %w", err)
	}
	if err := m.parseTokenizer(tokData); err != nil {
		return nil, fmt.Errorf("model2vec: %s: %w", tokPath, err)
	}
	cfgPath := filepath.Join(dir, "config.json")
	if data, err := os.ReadFile(cfgPath); err == nil {
		var cfg struct {
			Normalize *bool `json:"normalize"`
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			return nil, fmt.Errorf("model2vec: %s: %w", cfgPath, err)
		}
		m.normalize = cfg.Normalize != nil && *cfg.Normalize
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("model2vec: %w", err)
	}
	stPath := filepath.Join(dir, "model.safetensors")
	st, err := os.ReadFile(stPath)
	if err != nil {
		return nil, fmt.Errorf("model2vec: %w", err)
	}
	t, err := parseSafetensors(st, "embeddings")
	if err != nil {
		return nil, fmt.Errorf("model2vec: %s: %w", stPath, err)
	}
	if len(t.Shape) != 2 || t.Shape[0] <= 0 || t.Shape[1] <= 0 {
		return nil, fmt.Errorf("model2vec: %s: embeddings has shape %v, want [vocabulary, dimension]", stPath, t.Shape)
	}
	rows, dim := t.Shape[0], t.Shape[1]
	for tok, id := range m.vocab {
		if int(id) >= rows {
			return nil, fmt.Errorf("model2vec: %s has %d rows but %s gives %q the id %d", stPath, rows, tokPath, tok, id)
		}
	}
	m.dim = dim
	m.emb = t.float32s()
	sum := sha256.Sum256(st)
	m.info = Info{Name: "model2vec", Model: filepath.Base(filepath.Clean(dir)) + "@" + hex.EncodeToString(sum[:4]), Dim: dim}
	return m, nil
}

// Info reports "model2vec", the model (see NewModel2Vec) and the dimension.
func (m *Model2Vec) Info() Info { return m.info }

// Embed returns one vector per text: the mean of its tokens' rows (normalized if the model's
// config says so), or the zero vector when it has no known token. Kind makes no difference.
func (m *Model2Vec) Embed(ctx context.Context, texts []string, _ Kind) ([][]float32, error) {
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*m.dim)
	var ids []int32
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v := flat[i*m.dim : (i+1)*m.dim : (i+1)*m.dim]
		out[i] = v
		ids = m.tokenize(t, ids[:0])
		if len(ids) == 0 {
			continue
		}
		for _, id := range ids {
			row := m.emb[int(id)*m.dim : (int(id)+1)*m.dim]
			for j := range v {
				v[j] += row[j]
			}
		}
		var norm float64
		for j := range v {
			v[j] /= float32(len(ids))
			norm += float64(v[j]) * float64(v[j])
		}
		if m.normalize && norm > 0 {
			inv := float32(1 / math.Sqrt(norm))
			for j := range v {
				v[j] *= inv
			}
		}
	}
	return out, nil
}

// parseTokenizer reads the parts of tokenizer.json that WordPiece tokenization needs.
func (m *Model2Vec) parseTokenizer(data []byte) error {
	var tj struct {
		Normalizer json.RawMessage `json:"normalizer"`
		Model      struct {
			Type     string           `json:"type"`
			Vocab    map[string]int32 `json:"vocab"`
			UnkToken string           `json:"unk_token"`
			Prefix   *string          `json:"continuing_subword_prefix"`
			MaxChars int              `json:"max_input_chars_per_word"`
		} `json:"model"`
	}
	if err := json.Unmarshal(data, &tj); err != nil {
		return err
	}
	if tj.Model.Type != "WordPiece" {
		return fmt.Errorf("model type %q, want WordPiece (a BERT tokenizer)", tj.Model.Type)
	}
	if len(tj.Model.Vocab) == 0 {
		return errors.New("empty vocab")
	}
	for tok, id := range tj.Model.Vocab {
		if id < 0 {
			return fmt.Errorf("token %q has the negative id %d", tok, id)
		}
	}
	m.vocab = tj.Model.Vocab
	if id, ok := m.vocab[tj.Model.UnkToken]; ok && tj.Model.UnkToken != "" {
		m.unk = id
	}
	m.prefix = "##"
	if tj.Model.Prefix != nil {
		m.prefix = *tj.Model.Prefix
	}
	m.maxChars = tj.Model.MaxChars
	if m.maxChars <= 0 {
		m.maxChars = 100
	}
	return m.parseNormalizer(tj.Normalizer)
}

// parseNormalizer sets lowercase and strip from a BertNormalizer, a Lowercase, a
// StripAccents or a Sequence of them; other normalizers are ignored.
func (m *Model2Vec) parseNormalizer(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var n struct {
		Type         string            `json:"type"`
		Lowercase    *bool             `json:"lowercase"`
		StripAccents *bool             `json:"strip_accents"`
		Normalizers  []json.RawMessage `json:"normalizers"`
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return fmt.Errorf("normalizer: %w", err)
	}
	switch n.Type {
	case "BertNormalizer":
		m.lowercase = n.Lowercase == nil || *n.Lowercase
		// As in the tokenizers library: strip_accents null follows lowercase.
		m.strip = m.lowercase
		if n.StripAccents != nil {
			m.strip = *n.StripAccents
		}
	case "Lowercase":
		m.lowercase = true
	case "StripAccents":
		m.strip = true
	case "Sequence":
		for _, sub := range n.Normalizers {
			if err := m.parseNormalizer(sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// tokenize appends text's token ids (without the unknown token) to ids.
func (m *Model2Vec) tokenize(text string, ids []int32) []int32 {
	var word []byte
	flush := func() {
		if len(word) > 0 {
			ids = m.wordPiece(string(word), ids)
			word = word[:0]
		}
	}
	for _, r := range text {
		if len(ids) >= model2vecMaxTokens {
			break
		}
		switch {
		case r == 0 || r == utf8.RuneError || (unicode.IsControl(r) && !unicode.IsSpace(r)):
			continue
		case unicode.IsSpace(r):
			flush()
			continue
		}
		if m.strip {
			if unicode.Is(unicode.Mn, r) {
				continue
			}
			r = foldAccent(r)
		}
		if m.lowercase {
			r = unicode.ToLower(r)
		}
		if bertPunct(r) || isCJK(r) {
			flush()
			word = utf8.AppendRune(word, r)
			flush()
			continue
		}
		word = utf8.AppendRune(word, r)
	}
	flush()
	if len(ids) > model2vecMaxTokens {
		ids = ids[:model2vecMaxTokens]
	}
	return ids
}

// wordPiece appends the ids of word's pieces: the longest vocabulary entry that starts it, then
// the longest continuation (prefixed "##") that starts the rest, and so on. A word that cannot
// be covered, or is too long, is the unknown token, which is left out.
func (m *Model2Vec) wordPiece(word string, ids []int32) []int32 {
	if utf8.RuneCountInString(word) > m.maxChars {
		return ids
	}
	n := len(ids)
	for start := 0; start < len(word); {
		end := len(word)
		found := false
		for end > start {
			piece := word[start:end]
			if start > 0 {
				piece = m.prefix + piece
			}
			if id, ok := m.vocab[piece]; ok {
				ids = append(ids, id)
				found = true
				break
			}
			// Step back one rune.
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if !found {
			return ids[:n] // the whole word is unknown
		}
		start = end
	}
	return ids
}

// bertPunct is BERT's punctuation: every ASCII non-letter, non-digit, non-space printable
// character, and Unicode's punctuation.
func bertPunct(r rune) bool {
	if r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126 {
		return true
	}
	return unicode.IsPunct(r)
}

// isCJK reports the CJK ideograph blocks that BERT splits into single characters.
func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF || r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F || r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B820 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}

// accents maps the precomposed Latin letters of U+00C0–U+017F to their base letters, which is
// what NFD followed by dropping combining marks gives for them (the standard library has no
// Unicode normalization). Other letters are kept as they are.
var accents = func() map[rune]rune {
	m := map[rune]rune{}
	for base, list := range map[rune]string{
		'A': "ÀÁÂÃÄÅĀĂĄ", 'a': "àáâãäåāăą", 'C': "ÇĆĈĊČ", 'c': "çćĉċč", 'D': "Ď", 'd': "ď",
		'E': "ÈÉÊËĒĔĖĘĚ", 'e': "èéêëēĕėęě", 'G': "ĜĞĠĢ", 'g': "ĝğġģ", 'H': "Ĥ", 'h': "ĥ",
		'I': "ÌÍÎÏĨĪĬĮİ", 'i': "ìíîïĩīĭį", 'J': "Ĵ", 'j': "ĵ", 'K': "Ķ", 'k': "ķ",
		'L': "ĹĻĽ", 'l': "ĺļľ", 'N': "ÑŃŅŇ", 'n': "ñńņň", 'O': "ÒÓÔÕÖŌŎŐ", 'o': "òóôõöōŏő",
		'R': "ŔŖŘ", 'r': "ŕŗř", 'S': "ŚŜŞŠ", 's': "śŝşš", 'T': "ŢŤ", 't': "ţť",
		'U': "ÙÚÛÜŨŪŬŮŰŲ", 'u': "ùúûüũūŭůűų", 'W': "Ŵ", 'w': "ŵ", 'Y': "ÝŶŸ", 'y': "ýÿŷ",
		'Z': "ŹŻŽ", 'z': "źżž",
	} {
		for _, r := range list {
			m[r] = base
		}
	}
	return m
}()

func foldAccent(r rune) rune {
	if r < 0xC0 || r > 0x17F {
		return r
	}
	if b, ok := accents[r]; ok {
		return b
	}
	return r
}

// tensor is one tensor of a safetensors file; data aliases the file's bytes.
type tensor struct {
	DType  string `json:"dtype"`
	Shape  []int  `json:"shape"`
	Offset [2]int `json:"data_offsets"`
	data   []byte
}

// safetensorsMaxHeader bounds the JSON header, as the reference implementation does (100 MB).
const safetensorsMaxHeader = 100 << 20

// parseSafetensors finds the tensor name in a safetensors file (an 8-byte little-endian header
// length n, n bytes of JSON mapping tensor names to {dtype, shape, data_offsets} (and
// "__metadata__" to strings), then the data, to which the offsets are relative) and checks
// that its dtype is F32, F16 or I8 and that its offsets hold exactly its shape's elements.
func parseSafetensors(file []byte, name string) (*tensor, error) {
	if len(file) < 8 {
		return nil, fmt.Errorf("truncated header: %d bytes, want at least 8", len(file))
	}
	n := binary.LittleEndian.Uint64(file)
	if n > safetensorsMaxHeader || n > uint64(len(file)-8) {
		return nil, fmt.Errorf("truncated header: it claims %d bytes, the file has %d after the length", n, len(file)-8)
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(file[8:8+n], &header); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	raw, ok := header[name]
	if !ok || name == "__metadata__" {
		return nil, fmt.Errorf("no tensor %q", name)
	}
	var t tensor
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	size := 0
	switch t.DType {
	case "F32":
		size = 4
	case "F16":
		size = 2
	case "I8":
		size = 1
	default:
		return nil, fmt.Errorf("tensor %q: dtype %q, want F32, F16 or I8", name, t.DType)
	}
	elems := 1
	for _, d := range t.Shape {
		if d < 0 || d > 0 && elems > math.MaxInt32/d {
			return nil, fmt.Errorf("tensor %q: shape %v out of range", name, t.Shape)
		}
		elems *= d
	}
	data := file[8+n:]
	start, end := t.Offset[0], t.Offset[1]
	if start < 0 || end < start || end > len(data) {
		return nil, fmt.Errorf("tensor %q: data offsets [%d, %d] outside the %d bytes of data", name, start, end, len(data))
	}
	if end-start != elems*size {
		return nil, fmt.Errorf("tensor %q: shape %v of %s needs %d bytes, data offsets give %d", name, t.Shape, t.DType, elems*size, end-start)
	}
	t.data = data[start:end]
	return &t, nil
}

// float32s converts the tensor's data to float32.
func (t *tensor) float32s() []float32 {
	le := binary.LittleEndian
	switch t.DType {
	case "F32":
		out := make([]float32, len(t.data)/4)
		for i := range out {
			out[i] = math.Float32frombits(le.Uint32(t.data[4*i:]))
		}
		return out
	case "F16":
		out := make([]float32, len(t.data)/2)
		for i := range out {
			out[i] = float16(le.Uint16(t.data[2*i:]))
		}
		return out
	default: // I8
		out := make([]float32, len(t.data))
		for i, b := range t.data {
			out[i] = float32(int8(b))
		}
		return out
	}
}

// float16 converts an IEEE 754 half-precision number to float32.
func float16(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // infinity or NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: frac·2⁻²⁴
		f := float32(frac) / (1 << 24)
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// pieces returns the tokens of text as the model cuts them (the unknown token left out).
func (m *Model2Vec) pieces(text string) []string {
	byID := make(map[int32]string, len(m.vocab))
	for tok, id := range m.vocab {
		byID[id] = tok
	}
	var out []string
	for _, id := range m.tokenize(text, nil) {
		out = append(out, byID[id])
	}
	return out
}
