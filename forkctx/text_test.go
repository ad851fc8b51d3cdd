package forkctx

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// containsAnyNaive is the obvious definition patternSet must agree with.
func containsAnyNaive(s string, patterns []string) bool {
	for _, p := range patterns {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func TestPatternSet(t *testing.T) {
	defaults := DefaultConfig().ErrorPatterns
	tests := []struct {
		name     string
		patterns []string
		text     string
		want     bool
	}{
		{"no patterns", nil, "error", false},
		{"empty text", defaults, "", false},
		{"text shorter than any pattern", defaults, "err", false},
		{"exact pattern", defaults, "error", true},
		{"at the start", defaults, "Error: boom", true},
		{"at the end", defaults, "the build FAILED", true},
		{"in the middle", defaults, "a Traceback (most recent call last)", true},
		{"inside a word", defaults, "terrors", true},
		{"near miss", defaults, "mirror erro rror faile xception", false},
		{"other case", defaults, "FaIlEd ERRor Failed", false},
		{"overlapping candidates", []string{"abcd", "bcde"}, "xxabcxbcdex", true},
		{"one-byte pattern falls back", []string{"!", "error"}, "wow!", true},
		{"one-byte pattern absent", []string{"!", "error"}, "wow", false},
		{"long patterns", []string{strings.Repeat("a", 300) + "b"}, strings.Repeat("a", 1000) + "b", true},
		{"long pattern absent", []string{strings.Repeat("a", 300) + "b"}, strings.Repeat("a", 1000), false},
		{"high bytes", []string{"\xff\xfe\xfd"}, "ab\xff\xfe\xfdcd", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := newPatternSet(tt.patterns)
			if got := ps.match(tt.text); got != tt.want {
				t.Fatalf("match(%q) = %v, want %v", tt.text, got, tt.want)
			}
			if naive := containsAnyNaive(tt.text, tt.patterns); naive != tt.want {
				t.Fatalf("the test is wrong: naive says %v", naive)
			}
		})
	}
}

func FuzzPatternSet(f *testing.F) {
	f.Add("error", "an Error here", "FAILED")
	f.Add("ab", "xxaab", "b")
	f.Add("rror", "mirror", "xception")
	f.Fuzz(func(t *testing.T, p1, text, p2 string) {
		var patterns []string
		for _, p := range []string{p1, p2} {
			if p != "" {
				patterns = append(patterns, p)
			}
		}
		ps := newPatternSet(patterns)
		if got, want := ps.match(text), containsAnyNaive(text, patterns); got != want {
			t.Fatalf("match(%q) with %q = %v, want %v", text, patterns, got, want)
		}
	})
}

func FuzzCharCount(f *testing.F) {
	for _, s := range []string{"", "ascii only", "日本語 and ascii", "😀😀", "bad \xff\xfe", "\xe2\x82", "\x80\x80abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := charCount(s), utf8.RuneCountInString(s); got != want {
			t.Fatalf("charCount(%q) = %d, want %d", s, got, want)
		}
	})
}

// FuzzCuts checks the cutting helpers on any input: they never split a
// character, always give valid UTF-8, and stay within their limits.
func FuzzCuts(f *testing.F) {
	f.Add("hello, world", 5, 0.8)
	f.Add("日本語のテキスト", 3, 0.5)
	f.Add("bad \xff\xfe\xe2\x82 bytes", 4, 0.8)
	f.Fuzz(func(t *testing.T, s string, limit int, ratio float64) {
		if limit < 0 || limit > 1<<16 || !(ratio > 0 && ratio < 1) {
			return
		}
		total := utf8.RuneCountInString(s)
		he, ts := headEnd(s, limit), tailStart(s, limit)
		if utf8.RuneCountInString(s[:he]) != min(limit, total) || utf8.RuneCountInString(s[ts:]) != min(limit, total) {
			t.Fatalf("headEnd/tailStart(%q, %d) = %d, %d", s, limit, he, ts)
		}
		fit := fitHeadTail(s, total, limit, ratio)
		if !utf8.ValidString(fit) {
			t.Fatalf("fitHeadTail(%q, %d) is not valid UTF-8", s, limit)
		}
		if n := utf8.RuneCountInString(fit); n > max(limit, 0) && total > limit {
			t.Fatalf("fitHeadTail(%q, %d) has %d characters", s, limit, n)
		}
		if total <= limit && fit != validUTF8(s) {
			t.Fatalf("fitHeadTail changed a string within the limit")
		}
		if p := previewRunes(s, limit); !utf8.ValidString(p) || utf8.RuneCountInString(p) > limit+3 {
			t.Fatalf("previewRunes(%q, %d) = %q", s, limit, p)
		}
		if total > limit && limit > 0 {
			if cut := cutHead(s, limit, total); !strings.HasPrefix(cut, validUTF8(s[:he])) || !utf8.ValidString(cut) {
				t.Fatalf("cutHead(%q, %d) = %q", s, limit, cut)
			}
			if cut := cutHeadTail(s, limit, total, ratio); !utf8.ValidString(cut) {
				t.Fatalf("cutHeadTail(%q, %d) = %q", s, limit, cut)
			}
		}
	})
}

func TestValidUTF8ReplacesEachInvalidByte(t *testing.T) {
	got := validUTF8("a\xff\xfeb\xe2\x82")
	if want := "a\uFFFD\uFFFDb\uFFFD\uFFFD"; got != want {
		t.Fatalf("validUTF8 = %q, want %q", got, want)
	}
	if s := "already valid ✓"; validUTF8(s) != s {
		t.Fatal("valid text changed")
	}
}

func TestHeadTailSeparatorLength(t *testing.T) {
	// fitHeadTail relies on the separator for (total, total) being the
	// longest for any cut of that total.
	for _, total := range []int{9, 10, 99, 100, 12345} {
		longest := utf8.RuneCountInString(headTailSeparator(total, total))
		for _, cut := range []int{0, 1, total / 2, total - 1} {
			if n := utf8.RuneCountInString(headTailSeparator(cut, total)); n > longest {
				t.Fatalf("separator for %d of %d has %d characters > %d", cut, total, n, longest)
			}
		}
	}
}
