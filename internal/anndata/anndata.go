// Package anndata makes the seeded vector sets that ownsona's approximate-search benchmarks
// and tests run on, and reads and writes them in a small binary format that other programs
// (the hnswlib script in testdata/annbench) load.
//
// # File format
//
// A vector file is a header of two little-endian uint32, n then dim, followed by n·dim
// little-endian IEEE 754 float32: row i is the floats [i·dim, (i+1)·dim). A neighbour file
// has the same header, n (queries) then k, followed by n·k little-endian uint32: row i lists
// the row numbers of query i's k nearest base vectors by dot product, best first.
package anndata

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
)

// Set is a base of vectors to index and queries to search them with, all normalized.
type Set struct {
	Name    string
	Dim     int
	Base    [][]float32 // rows of one contiguous block
	Queries [][]float32
}

// Clustered returns n base vectors and nq queries of length dim drawn around clusters centres:
// each is a random centre plus Gaussian noise of the same expected length, normalized, so a
// vector's cosine to its centre is about 0.7 and to another cluster's vectors about 0. The
// centres are random directions. The same arguments give the same set.
func Clustered(seed uint64, n, nq, dim, clusters int) Set {
	r := rand.New(rand.NewPCG(seed, 1))
	centres := rows(clusters, dim)
	for _, c := range centres {
		gaussian(r, c, 1)
		normalize(c)
	}
	sigma := 1 / math.Sqrt(float64(dim))
	draw := func(m int) [][]float32 {
		out := rows(m, dim)
		for _, v := range out {
			c := centres[r.IntN(clusters)]
			gaussian(r, v, sigma)
			for j := range v {
				v[j] += c[j]
			}
			normalize(v)
		}
		return out
	}
	base := draw(n)
	return Set{Name: fmt.Sprintf("clustered-%dx%d", n, dim), Dim: dim, Base: base, Queries: draw(nq)}
}

// Random returns n base vectors and nq queries of length dim with independent Gaussian
// coordinates, normalized: directions uniform on the sphere, the hardest case for a graph
// index because nothing is near anything.
func Random(seed uint64, n, nq, dim int) Set {
	r := rand.New(rand.NewPCG(seed, 2))
	draw := func(m int) [][]float32 {
		out := rows(m, dim)
		for _, v := range out {
			gaussian(r, v, 1)
			normalize(v)
		}
		return out
	}
	base := draw(n)
	return Set{Name: fmt.Sprintf("random-%dx%d", n, dim), Dim: dim, Base: base, Queries: draw(nq)}
}

// rows returns m slices of length dim over one contiguous block.
func rows(m, dim int) [][]float32 {
	flat := make([]float32, m*dim)
	out := make([][]float32, m)
	for i := range out {
		out[i] = flat[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return out
}

func gaussian(r *rand.Rand, v []float32, sigma float64) {
	for j := range v {
		v[j] = float32(r.NormFloat64() * sigma)
	}
}

func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := 1 / math.Sqrt(s)
	for j, x := range v {
		v[j] = float32(float64(x) * inv)
	}
}

// WriteVectors writes vecs (all of length dim) to path in the vector file format.
func WriteVectors(path string, dim int, vecs [][]float32) error {
	return write(path, len(vecs), dim, func(w *bufio.Writer) error {
		var b [4]byte
		for _, v := range vecs {
			if len(v) != dim {
				return fmt.Errorf("write %s: a vector of length %d, want %d", path, len(v), dim)
			}
			for _, x := range v {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
				w.Write(b[:])
			}
		}
		return nil
	})
}

// WriteNeighbors writes each query's k nearest row numbers to path in the neighbour file format.
func WriteNeighbors(path string, k int, nn [][]uint32) error {
	return write(path, len(nn), k, func(w *bufio.Writer) error {
		var b [4]byte
		for _, row := range nn {
			if len(row) != k {
				return fmt.Errorf("write %s: a row of %d neighbours, want %d", path, len(row), k)
			}
			for _, x := range row {
				binary.LittleEndian.PutUint32(b[:], x)
				w.Write(b[:])
			}
		}
		return nil
	})
}

func write(path string, n, m int, body func(*bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[:4], uint32(n))
	binary.LittleEndian.PutUint32(hdr[4:], uint32(m))
	w.Write(hdr[:])
	if err := body(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// ReadVectors reads a vector file.
func ReadVectors(path string) (dim int, vecs [][]float32, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, fmt.Errorf("read %s: %w", path, err)
	}
	n, dim := int(binary.LittleEndian.Uint32(hdr[:4])), int(binary.LittleEndian.Uint32(hdr[4:]))
	vecs = rows(n, dim)
	var b [4]byte
	for _, v := range vecs {
		for j := range v {
			if _, err := io.ReadFull(r, b[:]); err != nil {
				return 0, nil, fmt.Errorf("read %s: %w", path, err)
			}
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[:]))
		}
	}
	return dim, vecs, nil
}
