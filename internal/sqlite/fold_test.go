package sqlite

import (
	"strings"
	"testing"
)

// FuzzContainsFolded checks the search function against its definition:
// text contains needle, both case-folded.
func FuzzContainsFolded(f *testing.F) {
	for _, seed := range [][2]string{
		{"Élan ÜBER task", "über"}, {"scan the logs", "LOGS"}, {"ΣΊΣΥΦΟΣ", "σίσυφος"},
		{"200 K", "200 k"}, {"100%_done", "%_"}, {"", ""}, {"abc", ""}, {"\xff\xfeA", "\ufffda"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, text, needle string) {
		folded := foldCase(needle)
		want := strings.Contains(foldCase(text), folded)
		if got := containsFolded(text, folded); got != want {
			t.Fatalf("containsFolded(%q, %q) = %v, want %v", text, folded, got, want)
		}
		if want && !strings.Contains(foldCase(text), foldCase(folded)) {
			t.Fatalf("folding is not stable: %q", needle)
		}
	})
}
