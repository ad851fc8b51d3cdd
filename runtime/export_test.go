package runtime

// BeginStop does the first step of Turns.Stop alone: no turn starts
// after, but the turns are not cancelled yet (Stop cancels them next).
func BeginStop(t *Turns) {
	t.mu.Lock()
	t.stopped = true
	t.mu.Unlock()
}
