package mdterm

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/superagents/superagents/internal/golden"
)

// TestRenderGolden: a document with every element the renderer knows, in
// both palettes; the golden files keep the escape sequences.
func TestRenderGolden(t *testing.T) {
	src, err := os.ReadFile("testdata/answer.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		o    Options
	}{
		{"dark-60.golden", Options{Width: 60}},
		{"light-40.golden", Options{Width: 40, Light: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			golden.Check(t, tt.name, []byte(Render(string(src), tt.o)))
		})
	}
}

func TestRender(t *testing.T) {
	tests := []struct {
		name, src, want string // want: the text without its styles
	}{
		{"empty", "", ""},
		{"plain", "just text", "  just text"},
		{"bold", "a **b** c", "  a b c"},
		{"soft break", "one\ntwo", "  one two"},
		{"paragraphs", "one\n\ntwo", "  one\n\n  two"},
		{"tight list", "- a\n- b", "  • a\n  • b"},
		{"loose list", "- a\n\n- b", "  • a\n\n  • b"},
		{"ordered from 3", "3. a\n4. b", "  3. a\n  4. b"},
		{"heading 2", "## Title", "  ## Title"},
		{"link text is url", "<https://x.io>", "  https://x.io"},
		{"link", "[docs](https://x.io)", "  docs https://x.io"},
		{"image", "![a cat](cat.png)", "  Image: a cat → cat.png"},
		{"control characters dropped", "a\x1b[31mred\x07", "  a[31mred"},
		{"invalid UTF-8", "a\xffb", "  a\uFFFDb"},
		{"wrap", "aaa bbb ccc ddd eee fff ggg hhh iii jjj", "  aaa bbb ccc ddd eee fff\n  ggg hhh iii jjj"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ansi.Strip(Render(tt.src, Options{Width: 26}))
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestStylesClosePerWord: no style stays open across a space, so a
// wrapped line never carries one into the next line's prefix.
func TestStylesClosePerWord(t *testing.T) {
	out := Render("> **one two three four five six seven eight nine ten**", Options{Width: 24})
	for _, line := range strings.Split(out, "\n") {
		if strings.Count(line, "\x1b[1") > 0 && !strings.HasSuffix(line, "\x1b[m") {
			t.Fatalf("line %q ends with a style open", line)
		}
	}
	if !strings.Contains(out, "\x1b[1mone\x1b[m") {
		t.Fatalf("bold is not bold: %q", out)
	}
}

// FuzzRender: any input renders without panicking, as valid UTF-8, with
// no escape sequence but the renderer's own styles.
func FuzzRender(f *testing.F) {
	src, _ := os.ReadFile("testdata/answer.md")
	for _, s := range []string{string(src), "", "**", "- [ ] x\n  > y", "|a|\n|-|\n|b|", "\x1b]0;title\x07"} {
		f.Add(s, 40)
	}
	f.Fuzz(func(t *testing.T, s string, width int) {
		out := Render(s, Options{Width: width % 200})
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8: %q", out)
		}
		for _, r := range ansi.Strip(out) {
			if r == 0x1b || r == 0x07 || r == 0x9b {
				t.Fatalf("a control character got through: %q", out)
			}
		}
	})
}
