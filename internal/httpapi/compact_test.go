package httpapi_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
)

// POST /v1/sessions/{id}/compact stores COMPACT-1's shape, and the next
// turn sends the model the summary and what follows it.
func TestCompactSession(t *testing.T) {
	h := newHarness(t)
	id := h.session().ID
	h.ok(http.StatusOK, "POST", "/v1/sessions/"+id+"/messages?wait=true", map[string]any{"text": "quick: 2+2"}, nil)

	var got struct {
		Marker    sa.Message `json:"marker"`
		Summary   sa.Message `json:"summary"`
		Compacted int        `json:"compacted"`
	}
	h.ok(http.StatusOK, "POST", "/v1/sessions/"+id+"/compact", map[string]any{"instructions": "keep the numbers"}, &got)
	if got.Marker.Parts[0].Type != sa.PartCompaction || got.Marker.Parts[0].Text != "keep the numbers" ||
		!got.Summary.Summary || got.Summary.Role != sa.RoleAssistant || got.Compacted != 2 {
		t.Fatalf("compact stored %+v then %+v (%d compacted)", got.Marker, got.Summary, got.Compacted)
	}
	reqs := h.model.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, "Also: keep the numbers") {
		t.Fatalf("the summary request lacks the instructions: %s", body)
	}

	h.ok(http.StatusOK, "POST", "/v1/sessions/"+id+"/messages?wait=true", map[string]any{"text": "quick: 3+3"}, nil)
	reqs = h.model.Requests()
	last := string(reqs[len(reqs)-1].Body)
	if strings.Contains(last, "2+2") || !strings.Contains(last, "compacted to save room") || !strings.Contains(last, "3+3") {
		t.Fatalf("the turn after the compaction did not start at the summary: %s", last)
	}
	var hist history
	h.ok(http.StatusOK, "GET", "/v1/sessions/"+id+"/history", nil, &hist)
	if texts := hist.texts(); len(texts) != 5 || texts[0] != "quick: 2+2" {
		t.Fatalf("the history is not whole after the compaction: %q", texts)
	}

	tests := []struct {
		name, path string
		body       any
		want       int
	}{
		{"unknown session", "/v1/sessions/nosuchsession/compact", nil, http.StatusNotFound},
		{"unknown field", "/v1/sessions/" + id + "/compact", map[string]any{"instruction": "x"}, http.StatusBadRequest},
		{"unknown model", "/v1/sessions/" + id + "/compact", map[string]any{"model": "nope/x"}, http.StatusBadRequest},
	}
	for _, tt := range tests {
		if r := h.request("POST", tt.path, tt.body); r.status != tt.want {
			t.Errorf("%s: %d %s, want %d", tt.name, r.status, r.body, tt.want)
		}
	}
}

// GET /v1/sessions/{id}/cost gives a session's cost and its task tree's,
// each task with its own.
func TestSessionCost(t *testing.T) {
	h := newHarness(t)
	id := h.session().ID
	h.ok(http.StatusOK, "POST", "/v1/sessions/"+id+"/messages?wait=true", map[string]any{"text": "quick: 2+2"}, nil)
	task := h.launch(id, "child", "quick: 3+3")
	h.waitTask(task.ID)

	type price struct {
		USD          float64  `json:"usd"`
		Unpriced     []string `json:"unpriced"`
		InputTokens  int64    `json:"input_tokens"`
		OutputTokens int64    `json:"output_tokens"`
		CacheRead    int64    `json:"cache_read_tokens"`
		CacheWrite   int64    `json:"cache_write_tokens"`
	}
	prompt := func(p price) int64 { return p.InputTokens + p.CacheRead + p.CacheWrite }
	type tree struct {
		ID       string `json:"id"`
		Cost     price  `json:"cost"`
		TreeCost price  `json:"tree_cost"`
		Tasks    []tree `json:"tasks"`
	}
	var got tree
	h.ok(http.StatusOK, "GET", "/v1/sessions/"+id+"/cost", nil, &got)
	if got.ID != id || len(got.Tasks) != 1 || got.Tasks[0].ID != task.ID {
		t.Fatalf("cost tree = %+v", got)
	}
	own, child := got.Cost, got.Tasks[0].TreeCost
	if prompt(own) == 0 || prompt(child) == 0 || prompt(got.TreeCost) != prompt(own)+prompt(child) ||
		got.TreeCost.OutputTokens != own.OutputTokens+child.OutputTokens || len(got.TreeCost.Unpriced) != 1 {
		t.Fatalf("the tree does not add up: own %+v, task %+v, tree %+v", own, child, got.TreeCost)
	}
	var ofTask tree
	h.ok(http.StatusOK, "GET", "/v1/sessions/"+task.ID+"/cost", nil, &ofTask)
	if !reflect.DeepEqual(ofTask.TreeCost, child) || len(ofTask.Tasks) != 0 {
		t.Fatalf("the task's own tree %+v differs from its place in its parent's %+v", ofTask.TreeCost, child)
	}
	if r := h.request("GET", "/v1/sessions/nosuchsession/cost", nil); r.status != http.StatusNotFound {
		t.Fatalf("unknown session: %d %s", r.status, r.body)
	}
}
