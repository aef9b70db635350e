package vector

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "[]"},
		{"lowercase and punctuation", "Colby's new job, in L.A.!", "[colby new job in l a]"},
		{"unicode letters and numbers", "Café au lait — 2 cups, 1990", "[café au lait 2 cups 1990]"},
		{"combining mark stays with its letter", "Cafe\u0301 ok", "[cafe\u0301 ok]"},
		{"contractions stay whole", "I'm sure you don't, O'Brien", "[im sure you dont obrien]"},
		{"possessive s", "the dog's bowl and it's Mel's", "[the dog bowl and it mel]"},
		{"typographic apostrophe", "Melanie’s kids’ toys", "[melanie kids toys]"},
		{"plural possessive", "the dogs' bowls", "[the dogs bowls]"},
		{"s after apostrophe inside a word", "O'Shea", "[oshea]"},
		{"leading apostrophe", "'90s music", "[90s music]"},
		{"non-latin", "Привет, мир 東京", "[привет мир 東京]"},
		{"separators only", " ,.!?-- ", "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fmt.Sprint(Tokenize(tt.in)); got != tt.want {
				t.Errorf("Tokenize(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestStem(t *testing.T) {
	for in, want := range map[string]string{
		"puppies": "puppy", "studied": "study", "classes": "class", "boxes": "box",
		"watches": "watch", "paints": "paint", "painted": "paint", "painting": "paint",
		"running": "run", "stopped": "stop", "falling": "fall", "missed": "miss",
		"bake": "bak", "baked": "bak", "baking": "bak", "shoes": "sho", "shoe": "sho",
		"glass": "glass", "status": "status", "tennis": "tennis", "need": "need", "speed": "speed",
		"sing": "sing", "bed": "bed", "is": "is", "ties": "tie", "free": "free",
	} {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCosine(t *testing.T) {
	tests := []struct {
		name string
		a, b []float32
		want float32
	}{
		{"same direction", []float32{1, 2, 3}, []float32{2, 4, 6}, 1},
		{"opposite", []float32{1, 0}, []float32{-3, 0}, -1},
		{"orthogonal", []float32{1, 0}, []float32{0, 5}, 0},
		{"zero vector", []float32{0, 0}, []float32{1, 1}, 0},
		{"length mismatch", []float32{1}, []float32{1, 1}, 0},
		{"45 degrees", []float32{1, 0}, []float32{1, 1}, float32(1 / math.Sqrt2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cosine(tt.a, tt.b); !near(got, tt.want) {
				t.Errorf("Cosine = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLexicalSimilarity(t *testing.T) {
	tests := []struct {
		name, a, b string
		want       float32
	}{
		{"same words, other case and order", "I prefer dark roast coffee", "coffee: dark ROAST, I prefer!", 1},
		{"disjoint", "I prefer dark roast coffee", "My son lives in LA", 0},
		{"empty", "", "coffee", 0},
		{"stopwords count", "the the", "the", 1},
		{"half", "coffee tea", "coffee milk", 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LexicalSimilarity(tt.a, tt.b); !near(got, tt.want) {
				t.Errorf("LexicalSimilarity(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func near(a, b float32) bool { return math.Abs(float64(a-b)) < 1e-5 }

// FuzzTokenize: tokens are non-empty valid UTF-8 and tokenizing them again changes nothing.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"Colby's new job, in L.A.!", "I'm sure you don't, O'Brien", "Cafe\u0301 ’s 'x' 東京", "\xff\xfe'", "İSTANBUL ǅ ß"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := Tokenize(s)
		for _, tok := range toks {
			if tok == "" || !utf8.ValidString(tok) {
				t.Fatalf("Tokenize(%q) has token %q", s, tok)
			}
		}
		if again := Tokenize(strings.Join(toks, " ")); !slices.Equal(again, toks) {
			t.Fatalf("Tokenize(%q) = %q, but its tokens tokenize to %q", s, toks, again)
		}
		terms(s) // the stemmer must not panic either
	})
}
