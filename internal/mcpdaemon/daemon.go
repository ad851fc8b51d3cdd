// Package mcpdaemon lets the tasks that an agent host launches over
// `superagents mcp` outlive the host's process. `superagents mcp` becomes
// a thin proxy: it connects to a background server over a unix socket and
// copies the protocol's bytes both ways, starting that server when none
// runs. The server is detached from the host (a double fork into a
// session of its own, so that a host that kills its server's whole
// process tree does not reach it), serves each connection as one MCP
// session, runs the tasks, and exits by itself once it has had no
// connection and no task of its own for a grace period.
//
// One server serves one key: what changes its behaviour (the data
// directory, the workspace, the flags, the configuration files, the
// environment that matters). Only a hash of the key is ever written.
package mcpdaemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultIdle is how long a server with no connection and no task of its
// own waits before it exits.
const DefaultIdle = 30 * time.Second

// Key is what a background server's behaviour depends on. Two proxies
// with equal keys share one server.
type Key struct{ parts []string }

// Add records one part of the key.
func (k *Key) Add(name, value string) {
	k.parts = append(k.parts, name+"\x00"+value)
}

// AddFile records a file's path and, when it exists, its size and
// modification time, so that an edited file starts a new server.
func (k *Key) AddFile(name, path string) {
	info, err := os.Stat(path)
	if err != nil {
		k.Add(name, path+"\x00absent")
		return
	}
	k.Add(name, fmt.Sprintf("%s\x00%d\x00%d", path, info.Size(), info.ModTime().UnixNano()))
}

// Hash names the key in file names: the key itself may hold secrets (an
// API key) and is never written.
func (k Key) Hash() string {
	parts := slices.Clone(k.parts)
	slices.Sort(parts)
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x01")))
	return hex.EncodeToString(sum[:10])
}

// maxSocketPath keeps a socket's path within the smallest limit of the
// supported systems (104 bytes on macOS, 108 on Linux, with the NUL).
const maxSocketPath = 100

// Paths are a server's files: its socket, and the lock it holds while it
// runs (which holds its process id).
type Paths struct {
	Dir, Socket, Lock string
}

// PathsFor returns the paths of the server with that key hash, in
// $XDG_RUNTIME_DIR/superagents when set, else in a directory of the data
// directory, else (a path too long for a socket) in a directory of the
// system's temporary directory; the directory is made, private to the
// user. A directory that cannot be made, or is not private, passes the
// turn to the next; the error is the last one's when none serves.
func PathsFor(getenv func(string) string, dataDir, hash string) (Paths, error) {
	var dirs []string
	if run := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(run) {
		dirs = append(dirs, filepath.Join(run, "superagents"))
	}
	dirs = append(dirs, filepath.Join(dataDir, "run"), filepath.Join(os.TempDir(), "superagents-"+strconv.Itoa(os.Getuid())))
	name := hash + ".sock"
	var last error
	for _, dir := range dirs {
		if len(dir)+1+len(name) > maxSocketPath {
			continue
		}
		if err := privateDir(dir); err != nil {
			last = err
			continue
		}
		return Paths{Dir: dir, Socket: filepath.Join(dir, name), Lock: filepath.Join(dir, hash+".lock")}, nil
	}
	if last != nil {
		return Paths{}, last
	}
	return Paths{}, fmt.Errorf("no directory for the background server's socket has a path short enough (at most %d bytes)", maxSocketPath)
}

// PathsOf returns the paths of the server whose socket is socket.
func PathsOf(socket string) Paths {
	return Paths{Dir: filepath.Dir(socket), Socket: socket, Lock: strings.TrimSuffix(socket, ".sock") + ".lock"}
}

// privateDir makes dir, readable by the user alone, and refuses one that
// another user owns or others may enter.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("background server directory: %w", err)
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("background server directory: %w", err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !info.IsDir() || !ok || int(st.Uid) != os.Getuid() {
		return fmt.Errorf("background server directory %s is not a directory of this user", dir)
	}
	if info.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("background server directory: %w", err)
		}
	}
	return nil
}

// Lock is held by a background server for its whole life: one server
// per key.
type Lock struct {
	f    *os.File
	path string
}

// TryLock takes the lock at path without waiting; ok is false while
// another process holds it. The lock file records this process's id.
func TryLock(path string) (l *Lock, ok bool, err error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, false, fmt.Errorf("background server lock: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, false, nil
			}
			return nil, false, fmt.Errorf("background server lock: %w", err)
		}
		// The server that held it may have removed the file before it let
		// go: a lock on a file no longer at path locks nothing.
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 != nil || err2 != nil || !os.SameFile(held, now) {
			f.Close()
			continue
		}
		err = f.Truncate(0)
		if err == nil {
			_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		if err != nil {
			f.Close()
			return nil, false, fmt.Errorf("background server lock: %w", err)
		}
		return &Lock{f: f, path: path}, true, nil
	}
}

// Release removes the lock file, then lets the lock go.
func (l *Lock) Release() error {
	err := os.Remove(l.path)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Listen listens on the socket; the caller holds the lock, so a file
// left at path is a dead server's, and goes.
func Listen(path string) (*net.UnixListener, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove the old socket: %w", err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	ln.SetUnlinkOnClose(true)
	return ln, nil
}

// ServeOptions configure Serve.
type ServeOptions struct {
	// Handle serves one connection, until the client leaves or ctx ends;
	// Serve closes the connection afterwards.
	Handle func(ctx context.Context, conn net.Conn)
	// Busy says whether the server's own tasks are queued or running:
	// while they are, it does not exit.
	Busy func(ctx context.Context) (bool, error)
	// Idle is how long the server waits, with no connection and not
	// busy, before it exits (DefaultIdle when 0).
	Idle time.Duration
	// Logf reports why the server stops.
	Logf func(format string, args ...any)
}

// Serve accepts connections on ln and serves each, many at once, until it
// has been idle for opts.Idle (nil) or ctx ends (ctx's error). It closes
// ln, which removes the socket.
func Serve(ctx context.Context, ln net.Listener, opts ServeOptions) error {
	s := &server{ln: ln, opts: opts, idle: opts.Idle, logf: opts.Logf, last: time.Now()}
	if s.idle <= 0 {
		s.idle = DefaultIdle
	}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	acceptErr := make(chan error, 1)
	go s.accept(ctx, acceptErr)
	tick := time.NewTicker(min(max(s.idle/4, 10*time.Millisecond), time.Second))
	defer tick.Stop()
	defer s.wg.Wait()
	for {
		select {
		case <-ctx.Done():
			s.stop()
			<-acceptErr
			return ctx.Err()
		case err := <-acceptErr:
			s.stop()
			return fmt.Errorf("accept: %w", err)
		case <-tick.C:
		}
		if s.closeIfIdle(ctx) {
			ln.Close()
			<-acceptErr
			s.logf("no connection and no task for %s: exiting", s.idle)
			return nil
		}
	}
}

// server is the state of one Serve: the connections being served and
// since when none has been.
type server struct {
	ln   net.Listener
	opts ServeOptions
	idle time.Duration
	logf func(format string, args ...any)
	wg   sync.WaitGroup

	mu      sync.Mutex
	conns   int
	last    time.Time
	closing bool
}

// stop refuses the connections still to come and closes the listener.
func (s *server) stop() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.ln.Close()
}

// accept serves every connection in a goroutine of its own, until the
// listener fails or is closed, which it sends on errc.
func (s *server) accept(ctx context.Context, errc chan<- error) {
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			errc <- err
			return
		}
		s.mu.Lock()
		if s.closing {
			// Too late: the client sees its connection end unanswered
			// and starts another server.
			s.mu.Unlock()
			conn.Close()
			continue
		}
		s.conns++
		s.wg.Add(1)
		s.mu.Unlock()
		go s.handle(ctx, conn)
	}
}

func (s *server) handle(ctx context.Context, conn net.Conn) {
	defer s.wg.Done()
	s.opts.Handle(ctx, conn)
	conn.Close()
	s.mu.Lock()
	s.conns--
	s.last = time.Now()
	s.mu.Unlock()
}

// closeIfIdle reports whether the server has had no connection and no
// busy task for its idle time; if so it refuses connections from now on,
// decided in the same critical section as the count, so that a connection
// that arrives meanwhile is refused (its client starts another server)
// rather than cut off by a server on its way out.
func (s *server) closeIfIdle(ctx context.Context) bool {
	s.mu.Lock()
	n := s.conns
	s.mu.Unlock()
	if n > 0 {
		return false
	}
	if s.opts.Busy != nil {
		busy, err := s.opts.Busy(ctx)
		if err != nil {
			s.logf("cannot tell whether tasks still run: %v", err)
			busy = true // never leave a task behind on a doubt
		}
		if busy {
			s.mu.Lock()
			s.last = time.Now()
			s.mu.Unlock()
			return false
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == 0 && time.Since(s.last) >= s.idle {
		s.closing = true
		return true
	}
	return false
}
