package tokens

import (
	"container/heap"
	"math"
	"unicode/utf8"
)

// The patterns that split text into pieces before their bytes are merged,
// as OpenAI's tiktoken defines them for each encoding (copied from
// github.com/pkoukk/tiktoken-go, encoding.go, which the tests compare
// this package's counts with). o200kPiece and cl100kPiece find their
// matches without a regular-expression engine.
const (
	o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// encoder counts the tokens of text as tiktoken encodes it without
// special tokens: the text is split into pieces, and each piece is one
// token if the vocabulary holds it, else its bytes are merged pair by
// pair, lowest rank first. It is built from the vocabulary alone: a
// general tokenizer library also builds a decoder and a sorted copy of
// the 200,000 tokens, which counting never uses (they took longer than
// decoding the vocabulary itself).
type encoder struct {
	ranks map[string]int
	piece func(s string, i int) int // the end of the piece at i
}

// count returns the number of tokens of text.
func (e *encoder) count(text string) int {
	if !utf8.ValidString(text) {
		// The pattern matches runes: each invalid byte is one U+FFFD, as
		// in the reference, which converts the text to runes.
		text = string([]rune(text))
	}
	n := 0
	for i := 0; i < len(text); {
		end := e.piece(text, i)
		n += e.countPiece(text[i:end])
		i = end
	}
	return n
}

func (e *encoder) countPiece(piece string) int {
	if len(piece) == 1 {
		return 1 // every byte is a token
	}
	if _, ok := e.ranks[piece]; ok {
		return 1
	}
	if len(piece) > longPiece {
		return mergedCountLong(piece, e.ranks)
	}
	return mergedCount(piece, e.ranks)
}

// longPiece is the length above which a piece is merged through a heap:
// looking through all the parts for the lowest rank at every merge takes
// time that grows with the square of the length (a line of 40,000
// letters took 0.7 s, one of 200,000 would take 20), and pieces that long
// come from odd text, a minified file or a long run of one letter.
const longPiece = 256

// mergedCount merges the bytes of piece as byte-pair encoding does, the
// adjacent pair whose joined bytes have the lowest rank first, until no
// joined pair is in the vocabulary, and returns how many parts are left.
// It is tiktoken's bytePairMerge, counting instead of collecting.
func mergedCount(piece string, ranks map[string]int) int {
	type part struct{ start, rank int }
	var buf [64]part
	parts := buf[:0]
	for i := range len(piece) + 1 {
		parts = append(parts, part{i, math.MaxInt})
	}
	// rank is the rank of the bytes from part i to part i+skip+2, or
	// MaxInt if the vocabulary does not hold them.
	rank := func(i, skip int) int {
		if i+skip+2 < len(parts) {
			if r, ok := ranks[piece[parts[i].start:parts[i+skip+2].start]]; ok {
				return r
			}
		}
		return math.MaxInt
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = rank(i, 0)
	}
	for len(parts) > 1 {
		lowest, at := math.MaxInt, -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i].rank < lowest {
				lowest, at = parts[i].rank, i
			}
		}
		if at < 0 {
			break
		}
		parts[at].rank = rank(at, 1)
		if at > 0 {
			parts[at-1].rank = rank(at-1, 1)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	return len(parts) - 1
}

// mergedCountLong is mergedCount for a long piece: the same merges in the
// same order, the lowest rank first and the leftmost of equal ranks, found
// through a heap of the candidate pairs instead of a look through all of
// them. The parts are a linked list of their start offsets.
func mergedCountLong(piece string, ranks map[string]int) int {
	n := len(piece) + 1 // part boundaries, the end included
	next := make([]int, n)
	prev := make([]int, n)
	rank := make([]int, n) // of the pair that starts at each boundary
	for i := range n {
		next[i], prev[i] = i+1, i-1
	}
	// pairRank is the rank of the bytes of the part at boundary i and the
	// one after it.
	pairRank := func(i int) int {
		if j := next[i]; j < n {
			if k := next[j]; k < n {
				if r, ok := ranks[piece[i:k]]; ok {
					return r
				}
			}
		}
		return math.MaxInt
	}
	h := &pairHeap{}
	for i := range n {
		if rank[i] = pairRank(i); rank[i] != math.MaxInt {
			*h = append(*h, pair{rank[i], i})
		}
	}
	heap.Init(h)
	parts := len(piece)
	for h.Len() > 0 {
		p := heap.Pop(h).(pair)
		if next[p.at] >= n || rank[p.at] != p.rank {
			continue // merged away, or its pair changed since
		}
		// Merge the part at p.at with the next: the boundary between
		// them goes.
		gone := next[p.at]
		next[p.at] = next[gone]
		if next[gone] < n {
			prev[next[gone]] = p.at
		}
		next[gone] = n // marks it gone
		parts--
		for _, i := range []int{p.at, prev[p.at]} {
			if i < 0 {
				continue
			}
			if rank[i] = pairRank(i); rank[i] != math.MaxInt {
				heap.Push(h, pair{rank[i], i})
			}
		}
	}
	return parts
}

// pair is a candidate merge: the part at boundary at with the next one.
type pair struct{ rank, at int }

// pairHeap is a min-heap of pairs (container/heap), by rank, then by
// position: the leftmost of equal ranks first, as the look through all
// pairs finds it.
type pairHeap []pair

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(i, j int) bool {
	return h[i].rank < h[j].rank || h[i].rank == h[j].rank && h[i].at < h[j].at
}
func (h pairHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(pair)) }
func (h *pairHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}
