// Package vocab is the compact form of a byte-pair-encoding vocabulary
// that the tokens package embeds: for each token in order of rank, the
// gap from the previous rank and the token's bytes, after the number of
// tokens (so that the map is allocated once at its size):
//
//	uvarint(count) { uvarint(rank - previous rank - 1) uvarint(len(token)) token }
//
// compressed with DEFLATE. It is a quarter of the size of the tiktoken
// text form (base64 tokens and decimal ranks) and decodes without
// parsing text.
package vocab

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// FromTiktoken converts a vocabulary in tiktoken's text form.
func FromTiktoken(text []byte) ([]byte, error) {
	type entry struct {
		token string
		rank  int
	}
	var entries []entry
	for i, line := range strings.Split(string(text), "\n") {
		if line == "" {
			continue
		}
		tok, rank, ok := strings.Cut(line, " ")
		if !ok {
			return nil, fmt.Errorf("line %d: no rank", i+1)
		}
		b, err := base64.StdEncoding.DecodeString(tok)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		r, err := strconv.Atoi(rank)
		if err != nil || r < 0 {
			return nil, fmt.Errorf("line %d: bad rank %q", i+1, rank)
		}
		entries = append(entries, entry{string(b), r})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].rank < entries[j].rank })
	raw := binary.AppendUvarint(nil, uint64(len(entries)))
	prev := -1
	for _, e := range entries {
		if e.rank == prev {
			return nil, fmt.Errorf("rank %d appears twice", e.rank)
		}
		raw = binary.AppendUvarint(raw, uint64(e.rank-prev-1))
		raw = binary.AppendUvarint(raw, uint64(len(e.token)))
		raw = append(raw, e.token...)
		prev = e.rank
	}
	var out bytes.Buffer
	w, err := flate.NewWriter(&out, flate.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Decode returns the ranks of a compact vocabulary's tokens.
func Decode(data []byte) (map[string]int, error) {
	r := bufio.NewReaderSize(flate.NewReader(bytes.NewReader(data)), 64<<10)
	count, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, fmt.Errorf("vocabulary: %w", noEOF(err))
	}
	// The tokens' bytes are read into one arena, and the map's keys are
	// slices of one string made of it: one allocation, not one per token.
	type entry struct{ rank, end int }
	entries := make([]entry, 0, min(count, 1<<20))
	arena := make([]byte, 0, 2<<20)
	rank := -1
	for {
		gap, err := binary.ReadUvarint(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("vocabulary: %w", err)
		}
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, fmt.Errorf("vocabulary: %w", noEOF(err))
		}
		if gap > 1<<24 || n > 1<<16 {
			return nil, errors.New("vocabulary: corrupt entry")
		}
		rank += int(gap) + 1
		start := len(arena)
		arena = slices.Grow(arena, int(n))[:start+int(n)]
		if _, err := io.ReadFull(r, arena[start:]); err != nil {
			return nil, fmt.Errorf("vocabulary: %w", noEOF(err))
		}
		entries = append(entries, entry{rank, len(arena)})
	}
	if uint64(len(entries)) != count {
		return nil, fmt.Errorf("vocabulary: %d tokens, want %d", len(entries), count)
	}
	all := string(arena)
	ranks := make(map[string]int, len(entries))
	start := 0
	for _, e := range entries {
		ranks[all[start:e.end]] = e.rank
		start = e.end
	}
	if len(ranks) != len(entries) {
		return nil, fmt.Errorf("vocabulary: %d distinct tokens, want %d", len(ranks), len(entries))
	}
	return ranks, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
