package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/sandboxtest"
)

// TestSandboxCheck: `superagents sandbox check` probes the configured
// sandbox and says everything is confined where it is, as text and JSON.
func TestSandboxCheck(t *testing.T) {
	sandboxtest.RequireIsolation(t)
	h := newHarness(t)
	ws := t.TempDir()
	r := h.run("sandbox", "check", "--workspace", ws)
	if r.code != 0 || !strings.Contains(r.stdout, "confined      Multipath TCP sockets") ||
		!strings.HasSuffix(r.stdout, "everything the configuration asks for is enforced\n") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	var report struct {
		Mode     string `json:"mode"`
		Findings []struct {
			Name     string `json:"name"`
			Confined bool   `json:"confined"`
			Required bool   `json:"required"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(h.ok("", "sandbox", "check", "--workspace", ws, "--json")), &report); err != nil {
		t.Fatal(err)
	}
	if report.Mode != "workspace-write" || len(report.Findings) < 10 {
		t.Fatalf("report = %+v", report)
	}
	for _, f := range report.Findings {
		if f.Required && !f.Confined {
			t.Errorf("%s is not confined", f.Name)
		}
	}
	// The network allowed in the workspace's own file? A project may not
	// loosen the sandbox.
	writeFile(t, filepath.Join(ws, ".superagents", "config.toml"), "[sandbox]\nnetwork = true\n")
	if r := h.run("sandbox", "check", "--workspace", ws); r.code != 2 || !strings.Contains(r.stderr, "stricter, never looser") {
		t.Fatalf("a looser project sandbox: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestCommandsCannotReadTheDataDirectory: an agent's command finds
// superagents' data directory (its database, token and logs) empty.
func TestCommandsCannotReadTheDataDirectory(t *testing.T) {
	sandboxtest.RequireIsolation(t)
	h := newHarness(t)
	ws := t.TempDir()
	h.env["SUPERAGENTS_OFFLINE_SCRIPT"] = peekScript(t, `ls -A '`+h.dataDir+`' | while read f; do echo \"entry:$f\"; done; echo listing done`)
	h.ok("", "run", "--workspace", ws, "What is 2+2?") // the database exists
	out := h.ok("", "run", "--workspace", ws, "--json", "peek")
	if !strings.Contains(out, "listing done") {
		t.Fatalf("the command did not run:\n%s", out)
	}
	if entry := regexp.MustCompile(`entry:[^$]`).FindString(out); entry != "" {
		t.Fatalf("the command listed the data directory (%s):\n%s", entry, out)
	}
}

// TestCommandsCannotReadTheServeTokenFile: serve's --token-file, wherever
// it lies, is hidden from the commands of the tasks it runs, as the data
// directory is.
func TestCommandsCannotReadTheServeTokenFile(t *testing.T) {
	sandboxtest.RequireIsolation(t)
	const token = "outside-token-0123456789abcdef"
	h := newHarness(t)
	tokenFile := filepath.Join(t.TempDir(), "api-token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.env["SUPERAGENTS_OFFLINE_SCRIPT"] = peekScript(t, `cat '`+tokenFile+`'; echo reading done`)
	api := startServe(t, h, token, "--workspace", t.TempDir(), "--model", "offline", "--token-file", tokenFile)
	call := api.call
	var task struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	var session struct {
		ID string `json:"id"`
	}
	call("POST", "/v1/sessions", `{}`, &session)
	call("POST", "/v1/tasks", `{"session_id":"`+session.ID+`","description":"peek","prompt":"peek","agent":"general"}`, &task)
	for deadline := time.Now().Add(time.Minute); task.Status != "completed"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) || task.Status == "error" || task.Status == "cancelled" {
			t.Fatalf("task %+v did not complete", task)
		}
		call("GET", "/v1/tasks/"+task.ID, "", &task)
	}
	var history json.RawMessage
	call("GET", "/v1/tasks/"+task.ID+"/messages", "", &history)
	if !strings.Contains(string(history), "reading done") {
		t.Fatalf("the command did not run: %s", history)
	}
	if strings.Contains(string(history), token) {
		t.Fatalf("the command read the token file: %s", history)
	}
}

// peekScript writes an offline model's script that, asked to "peek", runs
// command (TOML-escaped already) with bash, then answers "peeked".
func peekScript(t *testing.T, command string) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "script.toml")
	writeFile(t, script, `[[rules]]
contains = "peek"
step = 1
tool_calls = [{ name = "bash", input = { command = "`+command+`" } }]

[[rules]]
contains = "peek"
after_tool = "bash"
reply = "peeked"
`)
	return script
}
