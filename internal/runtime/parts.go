package runtime

import (
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/events"
	"github.com/superagents/superagents/internal/tasks"
)

// Parts are the parts a runtime wired. They are for the tests of those
// parts (internal/stacktest), which check them as a runtime wires them;
// the ways in use the runtime's methods only.
type Parts struct {
	Engine *engine.Engine
	Bus    *events.Bus
	Tasks  *tasks.Manager
}

// PartsOf returns a runtime's parts.
func PartsOf(rt *Runtime) Parts { return Parts{Engine: rt.engine, Bus: rt.bus, Tasks: rt.tasks} }
