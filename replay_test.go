package superagents_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
)

// mapLineage is a LineageReader over plain maps. It lets these tests build
// shapes the stores refuse to create (cycles, dangling parents); the stores
// themselves are tested by the conformance suite in storetest/.
type mapLineage struct {
	links map[string]link
	msgs  map[string][]sa.Message // each session's own messages in id order
}

type link struct {
	parent string
	fork   int64
}

func (m *mapLineage) Link(_ context.Context, id string) (string, int64, error) {
	l, ok := m.links[id]
	if !ok {
		return "", 0, fmt.Errorf("session %s: %w", id, sa.ErrNotFound)
	}
	return l.parent, l.fork, nil
}

func (m *mapLineage) LastClear(_ context.Context, id string, upto int64) (int64, error) {
	var last int64
	for _, msg := range m.msgs[id] {
		if msg.ID <= upto && msg.Kind == sa.KindClear {
			last = msg.ID
		}
	}
	return last, nil
}

func (m *mapLineage) CountMessages(_ context.Context, id string, after, upto int64) (int, error) {
	n := 0
	for _, msg := range m.msgs[id] {
		if msg.ID > after && msg.ID <= upto {
			n++
		}
	}
	return n, nil
}

func (m *mapLineage) AppendMessages(_ context.Context, dst []sa.Message, id string, after, upto int64, limit int) ([]sa.Message, error) {
	n := 0
	for _, msg := range m.msgs[id] {
		if msg.ID > after && msg.ID <= upto && (limit == 0 || n < limit) {
			dst = append(dst, msg)
			n++
		}
	}
	return dst, nil
}

func TestBuildHistoryCorruptLineage(t *testing.T) {
	msg := func(id int64, session string) sa.Message {
		return sa.Message{ID: id, SessionID: session, Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("q")}}
	}
	tests := []struct {
		name  string
		links map[string]link
		start string
		want  error
	}{
		{
			name:  "self cycle",
			links: map[string]link{"a": {parent: "a", fork: 1}},
			start: "a",
			want:  sa.ErrCorrupt,
		},
		{
			name:  "two session cycle",
			links: map[string]link{"a": {parent: "b", fork: 1}, "b": {parent: "a", fork: 1}},
			start: "a",
			want:  sa.ErrCorrupt,
		},
		{
			name:  "long cycle entered from outside",
			links: map[string]link{"x": {parent: "a"}, "a": {parent: "b"}, "b": {parent: "c"}, "c": {parent: "a"}},
			start: "x",
			want:  sa.ErrCorrupt,
		},
		{
			name:  "missing parent",
			links: map[string]link{"a": {parent: "gone", fork: 1}},
			start: "a",
			want:  sa.ErrCorrupt,
		},
		{
			name:  "missing session itself is not found, not corrupt",
			links: map[string]link{},
			start: "nope",
			want:  sa.ErrNotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &mapLineage{links: tt.links, msgs: map[string][]sa.Message{"a": {msg(1, "a")}}}
			done := make(chan error, 1)
			go func() {
				_, err := sa.BuildHistory(context.Background(), r, tt.start)
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, tt.want) {
					t.Fatalf("BuildHistory error = %v, want %v", err, tt.want)
				}
				if errors.Is(tt.want, sa.ErrNotFound) && errors.Is(err, sa.ErrCorrupt) {
					t.Fatalf("a missing start session must not be reported as corruption: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("BuildHistory did not return: it loops on corrupt lineage")
			}
		})
	}
}

func TestPlanHistoryStopsAtClear(t *testing.T) {
	clear := func(id int64, s string) sa.Message {
		m := sa.ClearMessage()
		m.ID, m.SessionID = id, s
		return m
	}
	text := func(id int64, s string) sa.Message {
		return sa.Message{ID: id, SessionID: s, Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(fmt.Sprint(id))}}
	}
	r := &mapLineage{
		links: map[string]link{
			"root":  {},
			"mid":   {parent: "root", fork: 3},
			"child": {parent: "mid", fork: 6},
		},
		msgs: map[string][]sa.Message{
			"root":  {text(1, "root"), clear(2, "root"), text(3, "root"), text(9, "root")},
			"mid":   {text(4, "mid"), text(6, "mid"), clear(7, "mid")},
			"child": {text(8, "child")},
		},
	}
	got, err := sa.PlanHistory(context.Background(), r, "child")
	if err != nil {
		t.Fatal(err)
	}
	want := []sa.Segment{
		{SessionID: "root", After: 2, Upto: 3},
		{SessionID: "mid", After: 0, Upto: 6},
		{SessionID: "child", After: 0, Upto: sa.Unbounded},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("PlanHistory = %v, want %v", got, want)
	}
	hist, err := sa.BuildHistory(context.Background(), r, "child")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, m := range hist {
		ids = append(ids, m.ID)
	}
	if fmt.Sprint(ids) != "[3 4 6 8]" {
		t.Fatalf("history ids = %v, want [3 4 6 8] (root after its clear up to the fork, mid up to its fork point; mid's later clear ignored)", ids)
	}
}
