package runtime

// The runtime's operations come as four services, each its own type over
// the one Runtime: Sessions (conversations and their turns), Tasks
// (background tasks), Agents (the agent profiles and models) and Events
// (the change log). A way in asks the service for the operation:
// rt.Tasks().Submit(ctx, req). What belongs to the process (its store's
// read-only view, its configuration, workspace, runner and sandbox) stays
// on the Runtime itself.

// Sessions creates, forks, appends to, clears, compacts and deletes
// sessions, runs their turns, and keeps the sessions of hosts'
// conversations (MCP clients and imports).
type Sessions struct{ rt *Runtime }

// Tasks launches, resumes, cancels, clears, lists and reads background
// tasks, through the one policy of a task request (Check), and answers
// their questions.
type Tasks struct{ rt *Runtime }

// Agents are the agent profiles one can run, and the models they may use.
type Agents struct{ rt *Runtime }

// Events follows the store's change log: a cursor from a point, or from
// now, for a way in that reads it at its own pace.
type Events struct{ rt *Runtime }

// Sessions is the runtime's service for sessions and their turns.
func (rt *Runtime) Sessions() Sessions { return Sessions{rt} }

// Tasks is the runtime's service for background tasks.
func (rt *Runtime) Tasks() Tasks { return Tasks{rt} }

// Agents is the runtime's service for agent profiles and models.
func (rt *Runtime) Agents() Agents { return Agents{rt} }

// Events is the runtime's service for the change log.
func (rt *Runtime) Events() Events { return Events{rt} }
