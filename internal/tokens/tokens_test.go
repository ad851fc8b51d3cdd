package tokens_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/superagents/superagents/internal/tokens"
)

func TestCount(t *testing.T) {
	tests := []struct {
		encoding string
		text     string
		want     int
	}{
		{tokens.O200KBase, "", 0},
		{tokens.O200KBase, "hello world", 2},
		{tokens.O200KBase, "Hello, world!", 4},
		{tokens.CL100KBase, "hello world", 2},
		{tokens.CL100KBase, "Hello, world!", 4},
	}
	for _, tt := range tests {
		t.Run(tt.encoding+"/"+tt.text, func(t *testing.T) {
			c, err := tokens.NewCounter(tt.encoding)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Count(tt.text); got != tt.want {
				t.Fatalf("Count(%q) = %d, want %d", tt.text, got, tt.want)
			}
			if c.Encoding() != tt.encoding {
				t.Fatalf("Encoding() = %q", c.Encoding())
			}
		})
	}
}

func TestDefaultEncoding(t *testing.T) {
	c, err := tokens.NewCounter("")
	if err != nil {
		t.Fatal(err)
	}
	if c.Encoding() != tokens.DefaultEncoding {
		t.Fatalf("Encoding() = %q, want %q", c.Encoding(), tokens.DefaultEncoding)
	}
}

func TestUnknownEncoding(t *testing.T) {
	_, err := tokens.NewCounter("claude-3")
	if err == nil || !strings.Contains(err.Error(), `unknown token encoding "claude-3"`) || !strings.Contains(err.Error(), "o200k_base") {
		t.Fatalf("NewCounter(unknown) = %v", err)
	}
}

// Text is data: special-token markers and invalid bytes are counted, not
// obeyed or rejected.
func TestOddText(t *testing.T) {
	c, err := tokens.NewCounter(tokens.O200KBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"<|endoftext|>", "before <|endofprompt|> after", "bad \xff\xfe bytes", strings.Repeat("😀", 100)} {
		if n := c.Count(text); n <= 0 || n > len(text) {
			t.Errorf("Count(%q) = %d, want between 1 and %d", text, n, len(text))
		}
	}
}

// Counters built in parallel, and one counter used in parallel, agree.
func TestConcurrentUse(t *testing.T) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 200)
	counters := make([]*tokens.Counter, 4)
	var wg sync.WaitGroup
	for i := range counters {
		wg.Go(func() {
			c, err := tokens.NewCounter(tokens.O200KBase)
			if err != nil {
				t.Error(err)
				return
			}
			counters[i] = c
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	want := counters[0].Count(text)
	counts := make([]int, 8)
	for i := range counts {
		wg.Go(func() { counts[i] = counters[i%len(counters)].Count(text) })
	}
	wg.Wait()
	for i, got := range counts {
		if got != want {
			t.Errorf("count %d = %d, want %d", i, got, want)
		}
	}
}

func BenchmarkCount(b *testing.B) {
	c, err := tokens.NewCounter(tokens.O200KBase)
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("func main() { fmt.Println(\"hello, world\") } // a comment\n", 2000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		c.Count(text)
	}
}

// BenchmarkNewCounter builds the o200k counter: the vocabulary is decoded
// and the pattern compiled, once per counter.
func BenchmarkNewCounter(b *testing.B) {
	for b.Loop() {
		if _, err := tokens.NewCounter(tokens.O200KBase); err != nil {
			b.Fatal(err)
		}
	}
}
