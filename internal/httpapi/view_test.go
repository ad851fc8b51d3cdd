package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/cost"
	"github.com/superagents/superagents/internal/tasktools"
)

// TestTaskJSONIsTheTaskView: the API shows a task in the one shape every
// way in uses (tasktools.View), with what it cost as `tasks --json` shows it
// (cost.Costs), one task or a list of them.
func TestTaskJSONIsTheTaskView(t *testing.T) {
	h := newHarness(t)
	parent := h.session()
	launched := h.launch(parent.ID, "shape", "quick: shape")
	h.waitTask(launched.ID)
	var one map[string]any
	h.ok(http.StatusOK, "GET", "/v1/tasks/"+launched.ID, nil, &one)
	var list struct {
		Tasks []map[string]any `json:"tasks"`
	}
	h.ok(http.StatusOK, "GET", "/v1/tasks", nil, &list)
	stored, err := h.store.Task(context.Background(), launched.ID)
	if err != nil {
		t.Fatal(err)
	}
	costs, err := cost.Listed(context.Background(), h.store, h.cfg.ModelInfo, stored.ID)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(struct {
		tasktools.View
		cost.Costs
	}{tasktools.NewView(stored, time.Now()), costs})
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if len(list.Tasks) != 1 {
		t.Fatalf("list = %v", list)
	}
	for name, got := range map[string]map[string]any{"GET /v1/tasks/{id}": one, "GET /v1/tasks": list.Tasks[0]} {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v\nwant the view %v", name, got, want)
		}
	}
}
