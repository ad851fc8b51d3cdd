package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/cost"
)

// TestSessionsCarryTheirCost: a listed session, and one asked for alone,
// carry what it cost and what it cost with its tasks, the figures of its
// cost tree.
func TestSessionsCarryTheirCost(t *testing.T) {
	h := newHarness(t, func(h *harness) {
		h.cfg.Models = map[string]config.Model{"anthropic/claude-test": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}
	})
	parent := h.session()
	h.ok(http.StatusOK, "POST", "/v1/sessions/"+parent.ID+"/messages?wait=true", map[string]any{"text": "quick: hello"}, nil)
	h.waitTask(h.launch(parent.ID, "priced", "quick: priced").ID)

	var tree cost.PricedTree
	h.ok(http.StatusOK, "GET", "/v1/sessions/"+parent.ID+"/cost", nil, &tree)
	want := cost.Costs{Cost: tree.Cost, TreeCost: tree.TreeCost}
	if want.Cost.USD <= 0 || want.TreeCost.USD <= want.Cost.USD || len(tree.Tasks) != 1 {
		t.Fatalf("cost tree %+v: want the session's own cost and more with its task", tree)
	}

	var one struct {
		ID string `json:"id"`
		cost.Costs
	}
	h.ok(http.StatusOK, "GET", "/v1/sessions/"+parent.ID, nil, &one)
	if d := cmp.Diff(want, one.Costs); d != "" {
		t.Errorf("GET /v1/sessions/{id} costs (-want +got):\n%s", d)
	}
	var list struct {
		Sessions []struct {
			ID string `json:"id"`
			cost.Costs
		} `json:"sessions"`
	}
	h.ok(http.StatusOK, "GET", "/v1/sessions", nil, &list)
	found := false
	for _, s := range list.Sessions {
		if s.ID == parent.ID {
			found = true
			if d := cmp.Diff(want, s.Costs); d != "" {
				t.Errorf("GET /v1/sessions costs (-want +got):\n%s", d)
			}
		}
	}
	if !found {
		t.Fatalf("the session is not listed: %+v", list)
	}
}
