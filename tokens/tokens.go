// Package tokens counts tokens offline with a byte-pair-encoding tokenizer.
//
// The vocabularies ship inside the binary, only the two this package
// offers and in a compact form (see internal/vocab; vocab/README.md says
// where they come from), so nothing is fetched at run time. The encodings are OpenAI's; for Claude
// models a count is an estimate (Anthropic does not publish the tokenizer of
// its current models), close enough to enforce a context budget.
package tokens

import (
	"embed"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	tiktoken "github.com/pkoukk/tiktoken-go"

	"github.com/superagents/superagents/tokens/internal/vocab"
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

// useOfflineLoader points the tokenizer library at the embedded vocabularies.
// The library keeps its loader in an unguarded package variable, so it is set
// exactly once, before the first encoding is built; nothing else in the
// program sets it.
var useOfflineLoader = sync.OnceFunc(func() {
	tiktoken.SetBpeLoader(embeddedLoader{})
})

// embeddedLoader reads the vocabularies embedded in the binary; the
// library names each by the address of its tiktoken file.
type embeddedLoader struct{}

func (embeddedLoader) LoadTiktokenBpe(file string) (map[string]int, error) {
	name := strings.TrimSuffix(path.Base(file), ".tiktoken")
	data, err := vocabularies.ReadFile("vocab/" + name + ".vocab")
	if err != nil {
		return nil, fmt.Errorf("vocabulary %s is not embedded", name)
	}
	return vocab.Decode(data)
}

// Counter counts tokens with one encoding. Build it once and reuse it:
// building loads a vocabulary of up to 200,000 entries (about 0.2 s). A
// Counter is safe for concurrent use.
type Counter struct {
	encoding string
	bpe      *tiktoken.Tiktoken
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
	useOfflineLoader()
	bpe, err := tiktoken.GetEncoding(encoding)
	if err != nil {
		return nil, fmt.Errorf("load token encoding %s: %w", encoding, err)
	}
	return &Counter{encoding: encoding, bpe: bpe}, nil
}

// Encoding returns the name of the counter's encoding.
func (c *Counter) Encoding() string { return c.encoding }

// Count returns the number of tokens in text. Special-token markers such as
// "<|endoftext|>" count as ordinary text: text is data here, never control.
func (c *Counter) Count(text string) int {
	if text == "" {
		return 0
	}
	return len(c.bpe.EncodeOrdinary(text))
}
