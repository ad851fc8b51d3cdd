package postgres

// WithoutIDLock makes a store hand out ids without the advisory lock, so
// benchmarks can measure what the lock costs. Ids then follow the order
// they are taken in, not commit order.
func WithoutIDLock() Option {
	return func(s *Store) { s.noLock = true }
}

// ListenerPID is the backend process id of the connection that listens
// for other processes' changes (0 before it first connects).
func (s *Store) ListenerPID() uint32 { return s.listenerPID.Load() }
