package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/mcpclient"
)

// TestAskTrust: the chat asks once per content of the project's servers,
// remembers a yes and a no, and asks again when the definitions change;
// it reads no further than the answer's line.
func TestAskTrust(t *testing.T) {
	dataDir, ws := t.TempDir(), t.TempDir()
	servers := mcpclient.Servers{List: []mcpclient.Spec{{Name: "fs", Project: true, Display: "npx server ."}}, ProjectHash: "h1"}
	ask := func(input string, servers mcpclient.Servers) (bool, string, string) {
		t.Helper()
		var stderr strings.Builder
		in := strings.NewReader(input)
		a := &app{dataDir: dataDir, env: Env{Stdin: in, Stderr: &stderr, Getenv: func(string) string { return "" }}}
		trusted, err := a.askTrust(servers, ws)
		if err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(in)
		return trusted, stderr.String(), string(rest)
	}
	tests := []struct {
		name, input string
		hash        string
		want        bool
		asks        bool
		rest        string
	}{
		{"no", "n\nhello\n", "h1", false, true, "hello\n"},
		{"no is remembered", "y\n", "h1", false, false, "y\n"},
		{"changed definitions are asked about", "Yes\nnext", "h2", true, true, "next"},
		{"yes is remembered", "", "h2", true, false, ""},
	}
	for _, tt := range tests {
		s := servers
		s.ProjectHash = tt.hash
		trusted, prompt, rest := ask(tt.input, s)
		if trusted != tt.want || strings.Contains(prompt, "[y/N]") != tt.asks || rest != tt.rest {
			t.Errorf("%s: trusted %v, prompt %q, left %q", tt.name, trusted, prompt, rest)
		}
		if tt.asks && !strings.Contains(prompt, "fs: npx server .") {
			t.Errorf("%s: the question does not show the servers: %q", tt.name, prompt)
		}
	}
}
