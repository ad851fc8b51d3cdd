package vocab_test

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"os"
	"strconv"
	"strings"
	"testing"

	loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/pkoukk/tiktoken-go-loader/assets"

	"github.com/superagents/superagents/internal/tokens/internal/vocab"
)

// TestEmbeddedMatchTiktoken: the embedded files hold exactly the ranks of
// the tiktoken files they were made from (run go generate ./tokens after
// changing the format).
func TestEmbeddedMatchTiktoken(t *testing.T) {
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		t.Run(name, func(t *testing.T) {
			text, err := assets.Assets.ReadFile(name + ".tiktoken")
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile("../../vocab/" + name + ".vocab")
			if err != nil {
				t.Fatal(err)
			}
			got, err := vocab.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{}
			for _, line := range strings.Split(string(text), "\n") {
				if line == "" {
					continue
				}
				tok, rank, _ := strings.Cut(line, " ")
				b, _ := base64.StdEncoding.DecodeString(tok)
				want[string(b)], _ = strconv.Atoi(rank)
			}
			if len(got) != len(want) {
				t.Fatalf("%d tokens, want %d", len(got), len(want))
			}
			for tok, r := range want {
				if got[tok] != r {
					t.Fatalf("token %q has rank %d, want %d", tok, got[tok], r)
				}
			}
		})
	}
}

func TestFromTiktoken(t *testing.T) {
	tests := []struct {
		name, text, wantErr string
		want                map[string]int
	}{
		{"ranks with a gap", "YQ== 0\nYg== 1\nYWI= 5\n", "", map[string]int{"a": 0, "b": 1, "ab": 5}},
		{"unsorted", "Yg== 1\nYQ== 0\n", "", map[string]int{"a": 0, "b": 1}},
		{"empty", "", "", map[string]int{}},
		{"no rank", "YQ==\n", "line 1: no rank", nil},
		{"bad base64", "!!! 0\n", "line 1:", nil},
		{"bad rank", "YQ== x\n", `bad rank "x"`, nil},
		{"duplicate rank", "YQ== 0\nYg== 0\n", "rank 0 appears twice", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := vocab.FromTiktoken([]byte(tt.text))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := vocab.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// TestDecodeCorrupt: damaged data is an error, never a panic or a
// partial vocabulary taken for whole.
func TestDecodeCorrupt(t *testing.T) {
	good, err := vocab.FromTiktoken([]byte("YQ== 0\nYWJj 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	truncated := func(raw []byte) []byte {
		var b bytes.Buffer
		w, _ := flate.NewWriter(&b, flate.BestSpeed)
		w.Write(raw)
		w.Close()
		return b.Bytes()
	}
	for name, data := range map[string][]byte{
		"not deflate":     []byte("plain text"),
		"truncated token": truncated([]byte{1, 0, 5, 'a', 'b'}),
		"truncated entry": truncated([]byte{1, 0}),
		"huge length":     truncated([]byte{1, 0, 0xff, 0xff, 0xff, 0x7f}),
		"missing tokens":  truncated([]byte{2, 0, 1, 'a'}),
		"a token twice":   truncated([]byte{2, 0, 1, 'a', 0, 1, 'a'}),
		"no count":        truncated(nil),
		"cut stream":      good[:len(good)/2],
	} {
		if _, err := vocab.Decode(data); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// BenchmarkDecode: loading the o200k vocabulary (200,000 tokens) from
// its compact form, against the tiktoken text form it replaced.
func BenchmarkDecode(b *testing.B) {
	data, err := os.ReadFile("../../vocab/o200k_base.vocab")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := vocab.Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTiktokenText(b *testing.B) {
	for b.Loop() {
		if _, err := loader.NewOfflineLoader().LoadTiktokenBpe("o200k_base.tiktoken"); err != nil {
			b.Fatal(err)
		}
	}
}
