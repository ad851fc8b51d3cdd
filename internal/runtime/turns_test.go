package runtime_test

import (
	"context"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runtime"
)

// TestTurnReservedThenStopped: a turn reserved before Turns.Stop and let
// go in the moment Stop has begun but not yet cancelled the turns (a wake
// started from inside the waker's own Check can land there) ends as
// stopped, not failed: a stopped turn's end asks the waker nothing, so
// it cannot ask it again from inside its Check.
func TestTurnReservedThenStopped(t *testing.T) {
	r := open(t, t.TempDir(), t.TempDir())
	sess, err := r.Sessions().Create(context.Background(), sa.NewSession{Agent: "general", Title: "test"})
	if err != nil {
		t.Fatal(err)
	}
	turns := r.NewTurns(runtime.TurnsOptions{Holder: runtime.HolderHTTP})
	defer turns.Stop()
	tr, err := turns.Reserve(sess.ID, runtime.TurnRequest{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.BeginStop(turns)
	tr.Go()
	select {
	case <-tr.Done():
	case <-time.After(time.Minute):
		t.Fatal("the turn did not end")
	}
	if st := turns.State(sess.ID); st.Status != runtime.TurnStopped {
		t.Fatalf("turn state %+v, want %s", st, runtime.TurnStopped)
	}
	if !tr.Stopped() {
		t.Fatal("Stopped() = false for a turn that never ran")
	}
}
