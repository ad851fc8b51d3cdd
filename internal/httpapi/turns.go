package httpapi

import (
	"fmt"
	"log/slog"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runtime"
)

// newTurns is the server's record of the turns it runs in the background:
// the runtime's, whose waker wakes a session whose agent launched tasks
// in a turn run here once those tasks have ended, as `run --wait` does.
func newTurns(rt *runtime.Runtime, log *slog.Logger) *runtime.Turns {
	return rt.NewTurns(runtime.TurnsOptions{
		Holder: runtime.HolderHTTP,
		Log:    log,
		Launches: func(e sa.TurnEvent) bool {
			return e.Type == sa.TurnEventToolStart && e.Call != nil && e.Call.Name == sa.TaskTool
		},
		Busy: func(session string) error {
			return fmt.Errorf("%w in session %s: wait for it to end (GET /v1/sessions/%s shows it)", errTurnRunning, sa.ShortID(session), session)
		},
	})
}
