package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Codex's config.toml, edited as text: install appends its table, and
// uninstall gives the file back as it was.
func TestCodexInstallText(t *testing.T) {
	cases := []struct {
		name, src string // src "<none>": no file
		// err: install refuses, with this in its error.
		err string
		// note: install keeps an entry of the user's, with this note.
		note string
		// back: uninstall gives src back byte for byte.
		back bool
	}{
		{name: "no file", src: "<none>", back: true},
		{name: "empty file", src: "", back: true},
		{name: "settings and tables", src: "# mine\nmodel = \"x\"\n\n[mcp_servers.other]\ncommand = \"y\"\n\n[tui]\nnotifications = true\n", back: true},
		{name: "no newline at its end", src: "model = \"x\"", back: false},
		{name: "an mcp_servers table", src: "[mcp_servers]\n", back: true},
		{name: "an inline mcp_servers", src: "mcp_servers = { other = { command = \"y\" } }\n", err: "cannot take a [mcp_servers.superagents] table"},
		{name: "the user's own entry", src: "[mcp_servers.superagents]\ncommand = \"superagents\"\n", note: "already: kept as it is"},
		{name: "dotted keys of the user's", src: "mcp_servers.superagents.command = \"superagents\"\n", note: "already: kept as it is"},
		{name: "not TOML", src: "model = \n", err: "is not valid TOML"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			path := filepath.Join(home, ".codex", "config.toml")
			if c.src != "<none>" {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(c.src), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := []string{"HOME=" + home}
			a := &app{workspace: home, env: Env{Environ: env, Getenv: getenvOf(env)}}
			changes, err := a.codexChanges(false)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.note != "" {
				if len(changes) != 1 || !changes[0].note || !strings.Contains(changes[0].what, c.note) {
					t.Fatalf("changes %+v, want the note %q", changes, c.note)
				}
				changes, _ = a.codexChanges(true)
				if len(changes) != 1 || !changes[0].note || !strings.Contains(changes[0].what, "not the one install adds") {
					t.Fatalf("uninstall: changes %+v, want a note", changes)
				}
				return
			}
			apply(t, a, changes)
			got, _ := os.ReadFile(path)
			if src := strings.TrimSuffix(c.src, "<none>"); !bytes.HasPrefix(got, []byte(src)) {
				t.Errorf("install changed what was in the file:\n%s", got)
			}
			if again, err := a.codexChanges(false); err != nil || len(again) != 1 || !again[0].note {
				t.Errorf("install again: %+v, %v", again, err)
			}
			changes, err = a.codexChanges(true)
			if err != nil {
				t.Fatal(err)
			}
			apply(t, a, changes)
			after, err := os.ReadFile(path)
			if os.IsNotExist(err) {
				after = []byte("<none>")
			}
			if c.back && string(after) != c.src {
				t.Errorf("uninstall gave\n%q\nwant\n%q", after, c.src)
			}
			if !c.back && strings.TrimSpace(string(after)) != strings.TrimSpace(c.src) {
				t.Errorf("uninstall gave\n%q\nwant (but for white space)\n%q", after, c.src)
			}
		})
	}
}

func apply(t *testing.T, a *app, changes []change) {
	t.Helper()
	for _, c := range changes {
		if err := a.applyChange(c); err != nil {
			t.Fatal(err)
		}
	}
}
