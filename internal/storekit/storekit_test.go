package storekit

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
)

func TestChangeTask(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	old := sa.Task{ID: "t1", ParentSessionID: "p1", Status: sa.TaskRunning, CreatedAt: created,
		Progress: sa.TaskProgress{ByName: map[string]int{"read": 1}, LastTools: []string{"read"}}}
	for _, tt := range []struct {
		name     string
		change   func(*sa.Task) error
		wantErr  error
		wantKind sa.ChangeKind
	}{
		{"progress", func(t *sa.Task) error { t.Progress.ByName["grep"]++; return nil }, nil, sa.ChangeTaskUpdated},
		{"completes", func(t *sa.Task) error { t.Status = sa.TaskCompleted; return nil }, nil, sa.ChangeTaskCompleted},
		{"fails", func(t *sa.Task) error { t.Status = sa.TaskError; return nil }, nil, sa.ChangeTaskError},
		{"back to queued", func(t *sa.Task) error { t.Status = sa.TaskQueued; return nil }, sa.ErrConflict, ""},
		{"new parent", func(t *sa.Task) error { t.ParentSessionID = "p2"; return nil }, sa.ErrInvalid, ""},
		{"new id", func(t *sa.Task) error { t.ID = "t2"; return nil }, sa.ErrInvalid, ""},
		{"unknown status", func(t *sa.Task) error { t.Status = "lost"; return nil }, sa.ErrConflict, ""},
		{"negative timeout", func(t *sa.Task) error { t.Timeout = -1; return nil }, sa.ErrInvalid, ""},
		{"change fails", func(*sa.Task) error { return sa.ErrNotFound }, sa.ErrNotFound, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, kind, err := ChangeTask(old, tt.change)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if err == nil && kind != tt.wantKind {
				t.Errorf("kind %s, want %s", kind, tt.wantKind)
			}
			if err == nil && !got.CreatedAt.Equal(created) {
				t.Errorf("created at %v", got.CreatedAt)
			}
			if old.Progress.ByName["grep"] != 0 || len(old.Progress.LastTools) != 1 {
				t.Errorf("the change reached the original task: %+v", old.Progress)
			}
		})
	}
}

func TestPickID(t *testing.T) {
	many := []string{"abc1", "abc2", "abc3", "abc4", "abc5", "abc6"}
	for _, tt := range []struct {
		name    string
		ids     []string
		want    string
		wantErr error
		more    bool
	}{
		{"none", nil, "", sa.ErrNotFound, false},
		{"one", []string{"abc1"}, "abc1", nil, false},
		{"full id that prefixes another", []string{"abc", "abc1"}, "abc", nil, false},
		{"two", []string{"abc1", "abc2"}, "", sa.ErrInvalid, false},
		{"more than listed", many, "", sa.ErrInvalid, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := PickID("session", "abc", "abc", tt.ids)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Fatalf("PickID = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
			var amb *sa.AmbiguousIDError
			if errors.As(err, &amb) != (tt.wantErr == sa.ErrInvalid) {
				t.Fatalf("error %v: want an ambiguity: %v", err, tt.wantErr == sa.ErrInvalid)
			}
			if amb != nil && (amb.More != tt.more || len(amb.Candidates) > MaxCandidates) {
				t.Errorf("ambiguity lists %d, more=%v", len(amb.Candidates), amb.More)
			}
		})
	}
}

func TestPrepareAndEncodeMessage(t *testing.T) {
	now := time.Date(2026, 5, 6, 7, 8, 9, 10, time.FixedZone("X", 3600))
	m := PrepareMessage(sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("hi")}}, "s1", now)
	if m.Kind != sa.KindMessage || m.SessionID != "s1" || !m.CreatedAt.Equal(now) || m.CreatedAt.Location() != time.UTC {
		t.Fatalf("prepared %+v", m)
	}
	cleared := PrepareMessage(sa.ClearMessage(), "s1", now)
	if cleared.Parts == nil {
		t.Fatal("a clear message keeps nil parts")
	}
	parts, _ := json.Marshal(m.Parts)
	m.ID = 7
	got, err := json.Marshal(EncodedMessage{Message: m, Parts: parts})
	if err != nil {
		t.Fatal(err)
	}
	var back sa.Message
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if back.ID != 7 || back.Text() != "hi" || !back.CreatedAt.Equal(now) || back.Kind != sa.KindMessage {
		t.Fatalf("%s decodes as %+v", got, back)
	}
}
