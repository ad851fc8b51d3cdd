package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
)

// TestLaunchWithABudget: POST /v1/tasks takes superagents_task's budget
// fields, shows the budget the task got, and the task stops when its
// tree has spent it.
func TestLaunchWithABudget(t *testing.T) {
	h := newHarness(t, withLimits(func(l *config.Tasks) { l.MaxTokens = 100_000 }))
	parent := h.session()

	var launched sa.Task
	h.ok(http.StatusCreated, "POST", "/v1/tasks", map[string]any{"session_id": parent.ID, "agent": "general",
		"description": "tiny budget", "prompt": "quick: spend", "max_tokens": 1}, &launched)
	if launched.Budget != (sa.Budget{MaxTokens: 1}) {
		t.Fatalf("budget = %+v, want 1 token", launched.Budget)
	}
	ended := h.waitTask(launched.ID)
	if ended.Status != sa.TaskError || !strings.HasPrefix(ended.Error, "budget reached: ") || !strings.HasSuffix(ended.Error, " of 1 tokens (input, output and cache) spent by this task tree") {
		t.Fatalf("task ended %s %q, want a budget error", ended.Status, ended.Error)
	}

	// Asking more than the configuration allows gets the configured budget.
	h.ok(http.StatusCreated, "POST", "/v1/tasks", map[string]any{"session_id": parent.ID, "agent": "general",
		"description": "big budget", "prompt": "quick: more", "max_tokens": 5_000_000}, &launched)
	if launched.Budget.MaxTokens != 100_000 {
		t.Fatalf("budget = %+v, want tasks.max_tokens", launched.Budget)
	}
	h.waitTask(launched.ID)

	tests := []struct {
		name, body, wantErr, field string
	}{
		{"max_cost as a string", `{"max_cost": "lots"}`, "must be a number of dollars, not a string", "max_cost"},
		{"fractional max_tokens", `{"max_tokens": 1.5}`, "must be a whole number of tokens, not 1.5", "max_tokens"},
		{"negative max_tokens", `{"max_tokens": -3}`, "max_tokens cannot be negative", "max_tokens"},
		{"negative max_cost", `{"max_cost": -0.5}`, "max_cost must be a number of dollars", "max_cost"},
		{"budget with resume", `{"resume": "` + launched.ID + `", "prompt": "more", "max_cost": 1}`, "keeps the budget it was launched with", "max_cost"},
		{"max_cost on a model without a price", `{"session_id": "` + parent.ID + `", "agent": "general", "description": "d", "prompt": "p", "max_cost": 1}`,
			"has no price in the configuration", "max_cost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.request("POST", "/v1/tasks", tt.body)
			var body struct {
				Error string `json:"error"`
				Field string `json:"field"`
			}
			r.decode(t, &body)
			if r.status != http.StatusBadRequest || !strings.Contains(body.Error, tt.wantErr) || body.Field != tt.field {
				t.Fatalf("= %d %+v, want 400 about %q in field %q", r.status, body, tt.wantErr, tt.field)
			}
		})
	}
}
