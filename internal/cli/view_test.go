package cli_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/sqlite"
	"github.com/superagents/superagents/internal/tasktools"
)

// TestTaskJSONIsTheTaskView: tasks --json and task output --json show a
// task in the one shape every way in uses (tasktools.View), named "id".
func TestTaskJSONIsTheTaskView(t *testing.T) {
	h := newHarness(t)
	h.env["SUPERAGENTS_OFFLINE_SCRIPT"] = writeScript(t)
	h.ok("", "run", "--workspace", t.TempDir(), "please delegate and check")
	var list []map[string]any
	if err := json.Unmarshal([]byte(h.ok("", "tasks", "--json")), &list); err != nil || len(list) != 1 {
		t.Fatalf("tasks --json: %v %v", list, err)
	}
	id, _ := list[0]["id"].(string)
	var output map[string]any
	if err := json.Unmarshal([]byte(h.ok("", "task", "output", id, "--json")), &output); err != nil {
		t.Fatal(err)
	}
	if output["timed_out"] != false {
		t.Fatalf("task output --json = %v: want timed_out false", output)
	}
	delete(output, "timed_out")
	if err := json.Unmarshal([]byte(h.ok("", "tasks", "--json")), &list); err != nil || len(list) != 1 {
		t.Fatalf("tasks --json: %v %v", list, err)
	}

	st, err := sqlite.OpenDir(context.Background(), h.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stored, err := st.Task(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(tasktools.NewView(stored, time.Now()))
	var want map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	// The listing adds what the task cost to the view.
	delete(list[0], "cost")
	delete(list[0], "tree_cost")
	for name, got := range map[string]map[string]any{"tasks --json": list[0], "task output --json": output} {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v\nwant the view %v", name, got, want)
		}
	}
}
