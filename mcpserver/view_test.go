package mcpserver_test

import (
	"context"
	"encoding/json"
	"maps"
	"testing"
	"time"

	"github.com/superagents/superagents/tasks"
)

// TestStructuredContentIsTheTaskView: the tools' structured content is
// the one task shape every way in uses (tasks.View), named "id" as in
// the HTTP API and the commands' --json.
func TestStructuredContentIsTheTaskView(t *testing.T) {
	h := newHarness(t, fakeModel)
	c := h.connect(inMemory, "shape", "1.0")
	id := c.launch(map[string]any{"description": "add", "prompt": "What is 2+2?"})
	c.notification()
	_, output := c.ok("superagents_output", map[string]any{"task_id": id})
	_, list := c.ok("superagents_list", map[string]any{})
	stored, err := h.store.Task(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	want := jsonValue(t, tasks.NewView(stored, time.Now())).(map[string]any)
	if output["timed_out"] != false {
		t.Errorf("output's timed_out = %v", output["timed_out"])
	}
	delete(output, "timed_out")
	for name, got := range map[string]any{"superagents_output": output, "superagents_list": list["tasks"].([]any)[0]} {
		if !maps.EqualFunc(got.(map[string]any), want, func(a, b any) bool { return jsonEqual(t, a, b) }) {
			t.Errorf("%s's task = %v\nwant the view %v", name, got, want)
		}
	}
	if _, ok := want["id"]; !ok {
		t.Fatalf("the view has no id: %v", want)
	}
}

func jsonEqual(t *testing.T, a, b any) bool {
	x, _ := json.Marshal(jsonValue(t, a))
	y, _ := json.Marshal(jsonValue(t, b))
	return string(x) == string(y)
}
