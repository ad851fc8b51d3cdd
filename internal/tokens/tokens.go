// Package tokens counts tokens offline with a byte-pair-encoding tokenizer.
//
// The vocabularies ship inside the binary, only the two this package
// offers and in a compact form (see internal/vocab; vocab/README.md says
// where they come from), so nothing is fetched at run time. The encodings
// are OpenAI's; for Claude models a count is an estimate (Anthropic does
// not publish the tokenizer of its current models), close enough to
// enforce a context budget.
//
// Counting is done here rather than by a general tokenizer library, which
// took 20 times as long and built tables that counting never reads (see
// bpe.go and split.go); the tests check every count against such a
// library, github.com/pkoukk/tiktoken-go, and every split against the
// encodings' own patterns.
package tokens

import (
	"embed"
	"fmt"
	"slices"
	"strings"

	"github.com/superagents/superagents/internal/tokens/internal/vocab"
)

//go:generate go run ./internal/genvocab vocab o200k_base cl100k_base

//go:embed vocab/*.vocab
var vocabularies embed.FS

// Supported encodings.
const (
	O200KBase  = "o200k_base"
	CL100KBase = "cl100k_base"
)

// DefaultEncoding is the encoding used when none is named.
const DefaultEncoding = O200KBase

// Encodings lists the supported encodings.
func Encodings() []string { return []string{O200KBase, CL100KBase} }

// Counter counts tokens with one encoding. Build it once and reuse it:
// building loads a vocabulary of up to 200,000 entries (about 40 ms). A
// Counter is safe for concurrent use.
type Counter struct {
	encoding string
	encoder  *encoder
}

// NewCounter returns a counter for the named encoding ("" means
// DefaultEncoding).
func NewCounter(encoding string) (*Counter, error) {
	if encoding == "" {
		encoding = DefaultEncoding
	}
	if !slices.Contains(Encodings(), encoding) {
		return nil, fmt.Errorf("unknown token encoding %q (want one of %s)", encoding, strings.Join(Encodings(), ", "))
	}
	data, err := vocabularies.ReadFile("vocab/" + encoding + ".vocab")
	if err != nil {
		return nil, fmt.Errorf("vocabulary %s is not embedded", encoding)
	}
	ranks, err := vocab.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("load token encoding %s: %w", encoding, err)
	}
	enc := &encoder{ranks: ranks, piece: o200kPiece}
	if encoding == CL100KBase { // Encodings has two
		enc.piece = cl100kPiece
	}
	return &Counter{encoding: encoding, encoder: enc}, nil
}

// Encoding returns the name of the counter's encoding.
func (c *Counter) Encoding() string { return c.encoding }

// Count returns the number of tokens in text. Special-token markers such as
// "<|endoftext|>" count as ordinary text: text is data here, never control.
func (c *Counter) Count(text string) int {
	if text == "" {
		return 0
	}
	return c.encoder.count(text)
}
