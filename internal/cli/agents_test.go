package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAgentsCommand(t *testing.T) {
	h := newHarness(t)
	ws := t.TempDir()
	dir := filepath.Join(ws, ".superagents", "agents")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"reviewer.md": "---\ndescription: Reviews changes.\ntools: [read, grep]\n---\nReview carefully.\n",
		"broken.md":   "---\ndescription: Broken.\nmodle: x\n---\nbody\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := h.ok("", "agents", "--workspace", ws)
	for _, want := range []string{"general", "explore", "reviewer", "read,grep", "broken.md:3", `unknown key "modle"`} {
		if !strings.Contains(out, want) {
			t.Errorf("agents output lacks %q:\n%s", want, out)
		}
	}
	var listed struct {
		Agents []struct {
			Name   string   `json:"name"`
			Tools  []string `json:"tools"`
			Source string   `json:"source"`
		} `json:"agents"`
		Problems []string `json:"problems"`
	}
	if err := json.Unmarshal([]byte(h.ok("", "agents", "--workspace", ws, "--json")), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed.Agents) != 3 || len(listed.Problems) != 1 {
		t.Fatalf("agents --json = %+v: want 3 agents and the broken file as a problem", listed)
	}
	for _, a := range listed.Agents {
		if a.Name == "reviewer" && (a.Source != "project" || strings.Join(a.Tools, ",") != "read,grep") {
			t.Fatalf("reviewer = %+v", a)
		}
		if a.Name == "general" && strings.Join(a.Tools, ",") != "*" {
			t.Fatalf("general = %+v: all tools are shown as *", a)
		}
	}
}

func TestContextCommand(t *testing.T) {
	h := newHarness(t)
	big := strings.Repeat("x", 5000)
	id := h.ok(`{"role":"user","text":"Look at the logs."}
{"role":"assistant","parts":[{"type":"reasoning","text":"secret thoughts"},{"type":"tool_call","call_id":"c1","name":"read","input":{"path":"log.txt"}}]}
{"role":"tool","parts":[{"type":"tool_result","call_id":"c1","name":"read","output":"`+big+`"}]}
{"role":"assistant","text":"The log is long."}
`, "import", "-")
	out := h.ok("", "context", id)
	for _, want := range []string{"=== Preamble ===", "=== Digest ===", "User: Look at the logs.", `[Tool: read] {"path":"log.txt"}`, "Agent: The log is long."} {
		if !strings.Contains(out, want) {
			t.Errorf("context output lacks %q", want)
		}
	}
	if strings.Contains(out, "secret thoughts") {
		t.Error("the parent's reasoning reached the digest")
	}

	// A tighter [fork] setting in the project file is applied: the one
	// result is tier 1 by default, so make no result whole.
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".superagents"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "[fork]\ntier1_results = 0\ntier2_results = 0\ntier3_chars = 100\n"
	if err := os.WriteFile(filepath.Join(ws, ".superagents", "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Preamble string `json:"preamble"`
		Digest   string `json:"digest"`
		Stats    struct {
			Tools struct {
				Truncated int `json:"truncated"`
			} `json:"tools"`
		} `json:"stats"`
	}
	if err := json.Unmarshal([]byte(h.ok("", "context", id, "--json", "--workspace", ws)), &res); err != nil {
		t.Fatal(err)
	}
	if res.Stats.Tools.Truncated != 1 || strings.Contains(res.Digest, big) || !strings.Contains(res.Digest, "kept the first 100 of 5000") {
		t.Fatalf("context --json with tier3_chars=100: truncated=%d, digest:\n%s", res.Stats.Tools.Truncated, res.Digest)
	}
}
