package tasktools

import (
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
)

// A fork's launch reply says what it inherits and what its first request
// is expected to pay for it.
func TestForkNote(t *testing.T) {
	usd := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		fc   *sa.ForkContext
		want []string
	}{
		{"not a fork", nil, nil},
		{"the first fork writes", &sa.ForkContext{Tokens: 45000, CacheWriteTokens: 45000, USD: usd(0.16875)},
			[]string{"about 45000 tokens", "to write it to the prompt cache", "(about $0.1688)"}},
		{"a sibling reads", &sa.ForkContext{Tokens: 45000, CacheReadTokens: 45000, USD: usd(0.0135)},
			[]string{"to read all of it from the prompt cache", "(about $0.0135)"}},
		{"a later fork reads the start", &sa.ForkContext{Tokens: 45000, CacheReadTokens: 36000, CacheWriteTokens: 9000},
			[]string{"to read 36000 tokens of it", "and write 9000."}},
	}
	for _, tt := range tests {
		got := forkNote(tt.fc)
		if tt.want == nil && got != "" {
			t.Errorf("%s: %q, want nothing", tt.name, got)
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tt.name, got, w)
			}
		}
	}
}
