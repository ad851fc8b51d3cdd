package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
)

// POST /v1/sessions/{id}/compact stores seed 001's shape, and the next
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
