package storetest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	sa "github.com/superagents/superagents"
)

// testTaskListing covers what listings page through: search, offset,
// counts, stats and batch ids by prefix.
func testTaskListing(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	parent := mustCreate(t, st, user("Q1"))

	// Oldest first: "Fix the LOGIN page" is the oldest task.
	specs := []struct {
		desc, agent, batch string
	}{
		{"Fix the LOGIN page", "general", "batchaaa1"},
		{"review login_form.go", "explore", "batchaaa1"},
		{"100% coverage of the parser", "explore", "batchaaa2"},
		{"Write docs", "general", "batchbbb1"},
		{`path C:\login`, "general", "batchbbb1"},
	}
	var ids []string // newest first, as listings are
	for _, s := range specs {
		nt := newTask(parent.ID, s.desc)
		nt.Task.Agent, nt.Task.BatchID = s.agent, s.batch
		ids = append([]string{mustCreateTask(t, st, nt).ID}, ids...)
	}
	login, review, coverage, docs, path := ids[4], ids[3], ids[2], ids[1], ids[0]

	t.Run("search, offset and count", func(t *testing.T) {
		tests := []struct {
			name   string
			filter sa.TaskFilter
			want   []string
			total  int
		}{
			{"search ignores case", sa.TaskFilter{Search: "login"}, []string{path, review, login}, 3},
			{"search upper case", sa.TaskFilter{Search: "LOGIN PAGE"}, []string{login}, 1},
			{"percent is literal", sa.TaskFilter{Search: "100%"}, []string{coverage}, 1},
			{"underscore is literal", sa.TaskFilter{Search: "n_f"}, []string{review}, 1},
			{"backslash is literal", sa.TaskFilter{Search: `C:\l`}, []string{path}, 1},
			{"no match", sa.TaskFilter{Search: "nothing like it"}, nil, 0},
			{"search and agent", sa.TaskFilter{Search: "login", Agent: "general"}, []string{path, login}, 2},
			{"first page", sa.TaskFilter{Limit: 2}, []string{path, docs}, 5},
			{"second page", sa.TaskFilter{Limit: 2, Offset: 2}, []string{coverage, review}, 5},
			{"last page", sa.TaskFilter{Limit: 2, Offset: 4}, []string{login}, 5},
			{"past the end", sa.TaskFilter{Limit: 2, Offset: 9}, nil, 5},
			{"offset without limit", sa.TaskFilter{Offset: 3}, []string{review, login}, 5},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				list, err := st.ListTasks(ctx, tt.filter)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, task := range list {
					got = append(got, task.ID)
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("ListTasks(%+v) = %v, want %v", tt.filter, got, tt.want)
				}
				n, err := st.CountTasks(ctx, tt.filter)
				if err != nil || n != tt.total {
					t.Errorf("CountTasks(%+v) = %d, %v; want %d", tt.filter, n, err, tt.total)
				}
			})
		}
		_, err := st.ListTasks(ctx, sa.TaskFilter{Offset: -1})
		wantErrIs(t, err, sa.ErrInvalid, "ListTasks(negative offset)")
	})

	t.Run("stats", func(t *testing.T) {
		start := time.Now()
		end := func(id string, status sa.TaskStatus, took time.Duration, calls int) {
			t.Helper()
			_, err := st.UpdateTask(ctx, id, func(task *sa.Task) error {
				if status != sa.TaskRunning {
					task.Status = sa.TaskRunning
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			_, err = st.UpdateTask(ctx, id, func(task *sa.Task) error {
				task.Status, task.StartedAt, task.Progress.ToolCalls = status, start, calls
				if status.Terminal() {
					done := start.Add(took)
					task.CompletedAt = &done
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		end(login, sa.TaskCompleted, 2*time.Second, 3)
		end(review, sa.TaskError, 4*time.Second, 1)
		end(coverage, sa.TaskRunning, 0, 5)
		end(docs, sa.TaskCompleted, 9*time.Second, 0)

		got, err := st.TaskStats(ctx, sa.TaskFilter{})
		if err != nil {
			t.Fatal(err)
		}
		want := sa.TaskStats{
			Total:     5,
			ByStatus:  map[sa.TaskStatus]int{sa.TaskCompleted: 2, sa.TaskError: 1, sa.TaskRunning: 1, sa.TaskQueued: 1},
			ByAgent:   map[string]int{"general": 3, "explore": 2},
			ToolCalls: 9,
			Durations: sa.DurationStats{Count: 3, Avg: 5 * time.Second, Min: 2 * time.Second, Max: 9 * time.Second},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("TaskStats differs (-want +got):\n%s", diff)
		}
		batch, err := st.TaskStats(ctx, sa.TaskFilter{BatchID: "batchaaa1"})
		if err != nil {
			t.Fatal(err)
		}
		if batch.Total != 2 || batch.ToolCalls != 4 || batch.Durations.Count != 2 || batch.ByStatus[sa.TaskError] != 1 {
			t.Errorf("TaskStats(batch) = %+v: want 2 tasks, 4 tool calls, 2 ended, 1 error", batch)
		}
		empty, err := st.TaskStats(ctx, sa.TaskFilter{Agent: "nobody"})
		if err != nil || empty.Total != 0 || empty.Durations != (sa.DurationStats{}) {
			t.Errorf("TaskStats(no tasks) = %+v, %v: want zeros", empty, err)
		}
	})

	t.Run("resolve batch", func(t *testing.T) {
		if id, err := st.ResolveBatch(ctx, "batchaaa2"); err != nil || id != "batchaaa2" {
			t.Errorf("ResolveBatch(full id) = %q, %v", id, err)
		}
		if id, err := st.ResolveBatch(ctx, "batchb"); err != nil || id != "batchbbb1" {
			t.Errorf("ResolveBatch(unique prefix) = %q, %v", id, err)
		}
		_, err := st.ResolveBatch(ctx, "batcha")
		var amb *sa.AmbiguousIDError
		if !errors.As(err, &amb) || !slices.Equal(amb.Candidates, []string{"batchaaa1", "batchaaa2"}) {
			t.Errorf("ResolveBatch(ambiguous) = %v: want both candidates", err)
		}
		_, err = st.ResolveBatch(ctx, "zzzz")
		wantErrIs(t, err, sa.ErrNotFound, "ResolveBatch(unknown)")
		_, err = st.ResolveBatch(ctx, "ab")
		wantErrIs(t, err, sa.ErrInvalid, "ResolveBatch(too short)")
	})
}

// testTaskSearch covers what search matches: the text as it is, in any
// case of any script, with no character taken for a wildcard.
func testTaskSearch(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	parent := mustCreate(t, st, user("Q1"))
	created := map[string]string{} // description → id
	for _, desc := range []string{
		"Élan ÜBER task",
		"ΣΟΦΟΣ review",
		"straße über alles",
		"50% off_the record",
		"500 offers",
		"Kelvin: 300 \u212a",
		"plain ascii",
		"nul\x00Inside",
	} {
		created[desc] = mustCreateTask(t, st, newTask(parent.ID, desc)).ID
	}
	tests := []struct {
		search string
		want   []string // descriptions
	}{
		{"über", []string{"Élan ÜBER task", "straße über alles"}},
		{"ÜBER", []string{"Élan ÜBER task", "straße über alles"}},
		{"élan", []string{"Élan ÜBER task"}},
		{"ÉLAN über", []string{"Élan ÜBER task"}},
		{"σοφος", []string{"ΣΟΦΟΣ review"}}, // final sigma and capital sigma
		{"STRASSE", nil}, // simple folding: ß is not ss
		{"STRAßE", []string{"straße über alles"}},
		{"300 k", []string{"Kelvin: 300 \u212a"}}, // the Kelvin sign is a K
		{"PLAIN", []string{"plain ascii"}},
		{"0%", []string{"50% off_the record"}}, // % is no wildcard
		{"50%", []string{"50% off_the record"}},
		{"%", []string{"50% off_the record"}},
		{"f_t", []string{"50% off_the record"}}, // nor is _
		{"_", []string{"50% off_the record"}},
		{"5_0", nil},
		{"*", nil},
		{"\x00", []string{"nul\x00Inside"}}, // NUL is a character like any other
		{"über\x00", nil},
		{"\x00inside", []string{"nul\x00Inside"}},
		{"inside", []string{"nul\x00Inside"}},
	}
	for _, tt := range tests {
		t.Run(tt.search, func(t *testing.T) {
			f := sa.TaskFilter{ParentSessionID: parent.ID, Search: tt.search}
			list, err := st.ListTasks(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, task := range list {
				got[task.ID] = true
			}
			want := map[string]bool{}
			for _, desc := range tt.want {
				want[created[desc]] = true
			}
			if !maps.Equal(got, want) {
				var names []string
				for _, task := range list {
					names = append(names, task.Description)
				}
				t.Errorf("search %q found %q, want %q", tt.search, names, tt.want)
			}
			if n, err := st.CountTasks(ctx, f); err != nil || n != len(tt.want) {
				t.Errorf("CountTasks(search %q) = %d, %v; want %d", tt.search, n, err, len(tt.want))
			}
		})
	}
}

// testSessionPaging covers offsets in session listings.
func testSessionPaging(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	var ids []string // newest first
	for range 4 {
		ids = append([]string{mustCreate(t, st).ID}, ids...)
	}
	for _, tt := range []struct {
		name   string
		filter sa.SessionFilter
		want   []string
	}{
		{"page", sa.SessionFilter{Limit: 2, Offset: 1}, ids[1:3]},
		{"offset only", sa.SessionFilter{Offset: 3}, ids[3:]},
		{"past the end", sa.SessionFilter{Offset: 4}, nil},
	} {
		list, err := st.ListSessions(ctx, tt.filter)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range list {
			got = append(got, s.ID)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: ListSessions(%+v) = %v, want %v", tt.name, tt.filter, got, tt.want)
		}
	}
	_, err := st.ListSessions(ctx, sa.SessionFilter{Limit: -1})
	wantErrIs(t, err, sa.ErrInvalid, "ListSessions(negative limit)")
}
