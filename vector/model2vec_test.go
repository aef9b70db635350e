package vector

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tinyVocab is a WordPiece vocabulary of a few hundred pieces: BERT's special tokens, ASCII
// punctuation, whole words, common suffixes, and every letter and digit alone and as a
// continuation, so that any ASCII word can be cut into pieces.
func tinyVocab() []string {
	v := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	for r := '!'; r <= '~'; r++ {
		if bertPunct(r) {
			v = append(v, string(r))
		}
	}
	v = append(v, strings.Fields(`the a an i my you he she we they is are was were be have has do
		did not and or but of to in on at for with from by about as into like
		son daughter mother father dog cat pet name called lives live city coffee tea dark roast
		prefer buy where what when who how these days angeles los music band guitar play
		work job nurse hospital car house money book books read reading love like trip japan
		tokyo flying month year week new old good great happy un re`)...)
	v = append(v, "##s", "##ing", "##ed", "##er", "##ly", "##ion", "##able")
	for r := 'a'; r <= 'z'; r++ {
		v = append(v, string(r), "##"+string(r))
	}
	for r := '0'; r <= '9'; r++ {
		v = append(v, string(r), "##"+string(r))
	}
	v = append(v, "café") // an accented entry, reachable only without accent stripping
	return v
}

type tinyModel struct {
	dir   string
	vocab []string
	q     []int8 // the matrix, rows × dim; the F32 and F16 tensors hold q/128, exactly
	dim   int
}

// writeTinyModel writes a model2vec directory whose embeddings have the given dtype; lower
// sets the tokenizer's lowercase and normalize config.json's flag.
func writeTinyModel(tb testing.TB, dtype string, lower, normalize bool) *tinyModel {
	tb.Helper()
	m := &tinyModel{dir: tb.TempDir(), vocab: tinyVocab(), dim: 16}
	r := rand.New(rand.NewPCG(7, 7))
	m.q = make([]int8, len(m.vocab)*m.dim)
	for i := range m.q {
		m.q[i] = int8(r.IntN(255) - 127)
	}
	vocab := map[string]int{}
	for i, w := range m.vocab {
		vocab[w] = i
	}
	tok := map[string]any{
		"version":       "1.0",
		"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": lower},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"model": map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
			"max_input_chars_per_word": 100, "vocab": vocab},
	}
	writeJSON(tb, filepath.Join(m.dir, "tokenizer.json"), tok)
	writeJSON(tb, filepath.Join(m.dir, "config.json"), map[string]any{"model_type": "model2vec", "normalize": normalize, "hidden_dim": m.dim})
	var data bytes.Buffer
	for _, x := range m.q {
		switch dtype {
		case "F32":
			_ = binary.Write(&data, binary.LittleEndian, math.Float32bits(float32(x)/128))
		case "F16":
			_ = binary.Write(&data, binary.LittleEndian, toFloat16(float32(x)/128))
		case "I8":
			data.WriteByte(byte(x))
		}
	}
	st := safetensorsFile(tb, map[string]any{
		"__metadata__": map[string]string{"format": "pt"},
		"embeddings":   map[string]any{"dtype": dtype, "shape": []int{len(m.vocab), m.dim}, "data_offsets": []int{0, data.Len()}},
	}, data.Bytes())
	if err := os.WriteFile(filepath.Join(m.dir, "model.safetensors"), st, 0o644); err != nil {
		tb.Fatal(err)
	}
	return m
}

func writeJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}

func safetensorsFile(tb testing.TB, header map[string]any, data []byte) []byte {
	tb.Helper()
	h, err := json.Marshal(header)
	if err != nil {
		tb.Fatal(err)
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	return append(append(out, h...), data...)
}

// toFloat16 converts a float32 that half precision holds exactly (normal or zero).
func toFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	if b&0x7fffffff == 0 {
		return sign
	}
	exp := int(b>>23&0xff) - 127 + 15
	return sign | uint16(exp)<<10 | uint16(b>>13&0x3ff)
}

// want is the mean of the rows of tokens, normalized if asked, computed from q.
func (m *tinyModel) want(tokens []string, normalize bool) []float32 {
	v := make([]float32, m.dim)
	for _, t := range tokens {
		r := slices.Index(m.vocab, t)
		for j := range v {
			v[j] += float32(m.q[r*m.dim+j]) / 128
		}
	}
	for j := range v {
		v[j] /= float32(len(tokens))
	}
	if normalize {
		n := float32(norm(v))
		for j := range v {
			v[j] /= n
		}
	}
	return v
}

func TestModel2Vec_tokenize(t *testing.T) {
	m := writeTinyModel(t, "F32", true, true)
	e, err := NewModel2Vec(m.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ text, want string }{
		{"My son lives in Los Angeles.", "my son lives in los angeles ."},
		{"  coffee,dark-roast!", "coffee , dark - roast !"},
		{"playing reading booked", "play ##ing reading book ##ed"},
		{"unbelievable", "un ##b ##e ##l ##i ##e ##v ##able"},
		{"xyzzy", "x ##y ##z ##z ##y"},
		{"Café CAFÉ", "c ##a ##f ##e c ##a ##f ##e"},          // accents stripped: "café" itself is never reached
		{"hello ß world", "he ##l ##l ##o w ##o ##r ##l ##d"}, // ß has no piece: unknown, dropped
		{"2024 年", "2 ##0 ##2 ##4"},                           // a CJK character is a word, unknown here
		{"", ""},
		{"\x00\x07 \t\n", ""},
	} {
		if got := strings.Join(e.pieces(tc.text), " "); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.text, got, tc.want)
		}
	}

	t.Run("too long a word is unknown", func(t *testing.T) {
		if got := e.pieces(strings.Repeat("a", 101) + " dog"); !slices.Equal(got, []string{"dog"}) {
			t.Errorf("got %q", got)
		}
	})
	t.Run("at most 512 tokens", func(t *testing.T) {
		if got := len(e.pieces(strings.Repeat("dog ", 600))); got != 512 {
			t.Errorf("got %d tokens", got)
		}
	})
	t.Run("case kept", func(t *testing.T) {
		m := writeTinyModel(t, "F32", false, true)
		e, err := NewModel2Vec(m.dir)
		if err != nil {
			t.Fatal(err)
		}
		// "D" has no piece: "Dog" is unknown.
		if got, want := strings.Join(e.pieces("dog Dog café"), " "), "dog café"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestModel2Vec_Embed(t *testing.T) {
	texts := []string{"my son lives in Los Angeles", "playing guitar", "ß", ""}
	tokens := [][]string{{"my", "son", "lives", "in", "los", "angeles"}, {"play", "##ing", "guitar"}, nil, nil}
	var normalized [][]float32
	for _, dtype := range []string{"F32", "F16", "I8"} {
		for _, normalize := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s normalize=%v", dtype, normalize), func(t *testing.T) {
				m := writeTinyModel(t, dtype, true, normalize)
				e, err := NewModel2Vec(m.dir)
				if err != nil {
					t.Fatal(err)
				}
				info := e.Info()
				if info.Name != "model2vec" || info.Dim != m.dim || !strings.HasPrefix(info.Model, filepath.Base(m.dir)+"@") || len(info.Model) != len(filepath.Base(m.dir))+9 {
					t.Errorf("Info %+v", info)
				}
				got := mustEmbed(t, e, Document, texts...)
				for i, v := range got {
					if len(v) != m.dim {
						t.Fatalf("%q: dimension %d", texts[i], len(v))
					}
					if tokens[i] == nil {
						if norm(v) != 0 {
							t.Errorf("%q: want the zero vector, got %v", texts[i], v)
						}
						continue
					}
					want := m.want(tokens[i], normalize)
					if dtype == "I8" && !normalize {
						for j := range want {
							want[j] *= 128 // I8 rows are q, the others q/128
						}
					}
					for j := range want {
						if math.Abs(float64(v[j]-want[j])) > 1e-5*max(1, math.Abs(float64(want[j]))) {
							t.Fatalf("%q: got %v, want %v", texts[i], v, want)
						}
					}
				}
				if normalize {
					if normalized == nil {
						normalized = got
					} else if !slices.EqualFunc(got, normalized, func(a, b []float32) bool { return Cosine(a, b) > 0.99999 || norm(a)+norm(b) == 0 }) {
						t.Error("normalized vectors differ between dtypes")
					}
				}
			})
		}
	}
}

func TestNewModel2Vec_errors(t *testing.T) {
	good := writeTinyModel(t, "F32", true, true)
	st, err := os.ReadFile(filepath.Join(good.dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	rows, dim := len(good.vocab), good.dim
	header := func(dtype string, shape []int, end int) []byte {
		return safetensorsFile(t, map[string]any{"embeddings": map[string]any{"dtype": dtype, "shape": shape, "data_offsets": []int{0, end}}}, make([]byte, rows*dim*4))
	}
	for _, tc := range []struct {
		name string
		file string // which file to replace (or remove, if content is nil)
		data []byte
		want string // in the error
	}{
		{"no tokenizer", "tokenizer.json", nil, "tokenizer.json"},
		{"bad tokenizer", "tokenizer.json", []byte("{"), "tokenizer.json"},
		{"not WordPiece", "tokenizer.json", []byte(`{"model":{"type":"BPE","vocab":{"a":0}}}`), `model type "BPE", want WordPiece`},
		{"empty vocab", "tokenizer.json", []byte(`{"model":{"type":"WordPiece","vocab":{}}}`), "empty vocab"},
		{"bad config", "config.json", []byte("[1"), "config.json"},
		{"no model", "model.safetensors", nil, "model.safetensors"},
		{"empty file", "model.safetensors", []byte{}, "model.safetensors: truncated header: 0 bytes"},
		{"truncated header", "model.safetensors", st[:20], "model.safetensors: truncated header: it claims"},
		{"header not JSON", "model.safetensors", append(binary.LittleEndian.AppendUint64(nil, 3), "{{{"...), "model.safetensors: header"},
		{"no embeddings", "model.safetensors", safetensorsFile(t, map[string]any{"other": map[string]any{"dtype": "F32", "shape": []int{1}, "data_offsets": []int{0, 4}}}, make([]byte, 4)), `no tensor "embeddings"`},
		{"wrong dtype", "model.safetensors", header("BF16", []int{rows, dim}, rows*dim*2), `dtype "BF16", want F32, F16 or I8`},
		{"shape mismatch", "model.safetensors", header("F32", []int{rows, dim}, rows*dim*2), "needs"},
		{"offsets outside", "model.safetensors", header("F32", []int{rows, dim + 1}, rows*(dim+1)*4), "outside"},
		{"one-dimensional", "model.safetensors", header("F32", []int{rows * dim}, rows*dim*4), "want [vocabulary, dimension]"},
		{"too few rows", "model.safetensors", header("F32", []int{rows / 2, dim}, rows/2*dim*4), "rows but"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{"tokenizer.json", "config.json", "model.safetensors"} {
				data, err := os.ReadFile(filepath.Join(good.dir, f))
				if err != nil {
					t.Fatal(err)
				}
				if f == tc.file {
					if tc.data == nil {
						continue
					}
					data = tc.data
				}
				if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := NewModel2Vec(dir)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.file) {
				t.Errorf("error %q does not name %s and %q", err, tc.file, tc.want)
			}
		})
	}

	t.Run("config.json is optional", func(t *testing.T) {
		m := writeTinyModel(t, "F32", true, true)
		if err := os.Remove(filepath.Join(m.dir, "config.json")); err != nil {
			t.Fatal(err)
		}
		e, err := NewModel2Vec(m.dir)
		if err != nil {
			t.Fatal(err)
		}
		if v := mustEmbed(t, e, Query, "dog dog cat")[0]; math.Abs(norm(v)-1) < 1e-3 {
			t.Error("normalized without a config saying so")
		}
	})
}

func TestFloat16(t *testing.T) {
	for _, tc := range []struct {
		h    uint16
		want float32
	}{
		{0x0000, 0}, {0x3c00, 1}, {0xc000, -2}, {0x3555, 0.333251953125}, {0x7bff, 65504},
		{0x0001, 1.0 / (1 << 24)}, {0x8001, -1.0 / (1 << 24)}, {0x03ff, 1023.0 / (1 << 24)},
		{0x7c00, float32(math.Inf(1))}, {0xfc00, float32(math.Inf(-1))},
	} {
		if got := float16(tc.h); got != tc.want {
			t.Errorf("float16(%#04x) = %v, want %v", tc.h, got, tc.want)
		}
	}
	if got := float16(0x7e00); !math.IsNaN(float64(got)) {
		t.Errorf("float16(0x7e00) = %v, want NaN", got)
	}
}

func FuzzParseSafetensors(f *testing.F) {
	m := writeTinyModel(f, "F16", true, true)
	st, err := os.ReadFile(filepath.Join(m.dir, "model.safetensors"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(st)
	f.Add(st[:40])
	f.Add([]byte{})
	f.Add(binary.LittleEndian.AppendUint64(nil, 1<<63))
	f.Add(append(binary.LittleEndian.AppendUint64(nil, 60), `{"embeddings":{"dtype":"I8","shape":[2,3],"data_offsets":[0,6]}}123456`...))
	f.Fuzz(func(t *testing.T, data []byte) {
		tn, err := parseSafetensors(data, "embeddings")
		if err != nil {
			return
		}
		elems := 1
		for _, d := range tn.Shape {
			elems *= d
		}
		if got := len(tn.float32s()); got != elems {
			t.Fatalf("shape %v: %d values", tn.Shape, got)
		}
	})
}

func BenchmarkModel2Vec_Embed(b *testing.B) {
	m := writeTinyModel(b, "F32", true, true)
	e, err := NewModel2Vec(m.dir)
	if err != nil {
		b.Fatal(err)
	}
	texts := []string{"My son Colby lives in Los Angeles and works as a sound engineer."}
	for b.Loop() {
		if _, err := e.Embed(context.Background(), texts, Document); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "texts/s")
}
