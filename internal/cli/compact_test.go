package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
)

// compact stores COMPACT-1's shape (a marker, then a summary) with the
// offline model, keeps the history whole, and a fork starts at the
// summary.
func TestCompactCommand(t *testing.T) {
	h := newHarness(t)
	id := h.ok(`{"role":"user","text":"What is 2+2?"}
{"role":"assistant","text":"2+2 equals 4."}
`, "import", "-")
	var res struct {
		Marker    sa.Message `json:"marker"`
		Summary   sa.Message `json:"summary"`
		Compacted int        `json:"compacted"`
	}
	if err := json.Unmarshal([]byte(h.ok("", "compact", id, "keep", "the", "numbers", "--json", "--model", "offline")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Marker.Role != sa.RoleUser || res.Marker.Parts[0].Type != sa.PartCompaction || res.Marker.Parts[0].Text != "keep the numbers" {
		t.Fatalf("marker = %+v", res.Marker)
	}
	if res.Summary.Role != sa.RoleAssistant || !res.Summary.Summary || res.Summary.Text() == "" || res.Compacted != 2 || res.Summary.ID != res.Marker.ID+1 {
		t.Fatalf("summary = %+v, compacted %d", res.Summary, res.Compacted)
	}
	exported := h.ok("", "export", id)
	if lines := strings.Split(exported, "\n"); len(lines) != 4 || !strings.Contains(lines[0], "2+2") {
		t.Fatalf("the history is not whole:\n%s", exported)
	}
	fork := h.ok("", "fork", id)
	if got := h.ok("", "context", fork); !strings.Contains(got, "starts from the latest compaction summary") {
		t.Fatalf("the fork's context does not start at the summary:\n%s", got)
	}

	if r := h.run("compact", "nope"); r.code == 0 || !strings.Contains(r.stderr, "nope") {
		t.Fatalf("compact of an unknown session: exit %d, %q", r.code, r.stderr)
	}
}
