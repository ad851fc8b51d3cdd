package mcpdaemon

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ReadyFD is the descriptor, in both processes a server is started
// through, of the pipe on which the server says it is ready.
const ReadyFD = 3

// StartOptions say how to start a server.
type StartOptions struct {
	// Path and Args run the first of the two processes the server is
	// started through (see Detach); it gets the ready pipe as ReadyFD.
	Path string
	Args []string
	// Env is the environment of both processes, and so the server's.
	Env []string
	// Log is the standard error of both.
	Log *os.File
	// Wait bounds the wait for the server to be ready.
	Wait time.Duration
}

// Start starts a server, detached, and returns once it serves (nil) or
// failed to (its error).
func Start(ctx context.Context, o StartOptions) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("start the background server: %w", err)
	}
	defer r.Close()
	cmd := exec.Command(o.Path, o.Args...)
	cmd.Env = o.Env
	cmd.Stderr = o.Log
	cmd.ExtraFiles = []*os.File{w} // ReadyFD
	// A session of its own: no signal to the host's process group or
	// terminal reaches it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return fmt.Errorf("start the background server: %w", err)
	}
	go cmd.Wait() // it exits as soon as it has started the server
	if d := o.Wait; d > 0 {
		r.SetReadDeadline(time.Now().Add(d))
	}
	stop := context.AfterFunc(ctx, func() { r.SetReadDeadline(time.Now()) })
	defer stop()
	line, err := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
	verb, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch {
	case verb == "ok":
		return nil
	case verb == "error":
		return errors.New(rest)
	case errors.Is(err, os.ErrDeadlineExceeded):
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the background server was not ready after %s", o.Wait)
	}
	return errors.New("the background server exited before it was ready")
}

// Detach is the first process a server is started through: it starts
// the server itself (path and args) with the ready pipe and its own
// standard error, and returns at once. The process then exits, so that
// the server is nobody's child: a host that kills its MCP server's
// process tree does not find it.
func Detach(path string, args, env []string) error {
	cmd := exec.Command(path, args...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	cmd.ExtraFiles = []*os.File{os.NewFile(ReadyFD, "ready")}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the background server: %w", err)
	}
	return cmd.Process.Release()
}

// Ready tells the process that started the server whether it serves.
type Ready struct {
	once sync.Once
	f    *os.File
}

// OpenReady opens the ready pipe the server was given as fd; nil (a
// server started by hand) tells nobody.
func OpenReady(fd int) *Ready {
	if fd < 0 {
		return &Ready{}
	}
	// The server's children (tasks' commands, MCP servers) must not hold
	// the pipe open: its end is how the starter learns of a failure.
	syscall.CloseOnExec(fd)
	return &Ready{f: os.NewFile(uintptr(fd), "ready")}
}

// Done says the server serves (nil) or why it cannot; only the first
// call counts.
func (r *Ready) Done(err error) {
	r.once.Do(func() {
		if r.f == nil {
			return
		}
		msg := "ok\n"
		if err != nil {
			msg = "error " + strings.Join(strings.Fields(err.Error()), " ") + "\n"
		}
		_, _ = io.WriteString(r.f, msg)
		r.f.Close()
	})
}

// Claim takes the lock of the server at p. It returns a nil lock, and no
// error, when another server is serving there. It waits, up to wait,
// while another server starts up or exits.
func Claim(ctx context.Context, p Paths, wait time.Duration) (*Lock, error) {
	deadline := time.Now().Add(wait)
	for {
		l, ok, err := TryLock(p.Lock)
		if err != nil || ok {
			return l, err
		}
		if conn, err := net.Dial("unix", p.Socket); err == nil {
			conn.Close()
			return nil, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("another background server holds %s but does not answer", p.Lock)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// MaxLog bounds a server's log file, and what one server writes to it;
// the file before is kept beside it, with the suffix .1.
const MaxLog = 1 << 20

// OpenLog opens a server's log file for appending, after moving a full
// one aside.
func OpenLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("background server log: %w", err)
	}
	if info, err := os.Stat(path); err == nil && info.Size() >= MaxLog {
		_ = os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("background server log: %w", err)
	}
	return f, nil
}

// LimitWriter writes to w until n bytes were written, then says once that
// the rest is dropped: a server that runs for days keeps its log bounded.
func LimitWriter(w io.Writer, n int64) io.Writer {
	return &limitWriter{w: w, left: n}
}

type limitWriter struct {
	mu   sync.Mutex
	w    io.Writer
	left int64
	full bool
}

func (l *limitWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.full:
		return len(p), nil
	case int64(len(p)) > l.left:
		l.full = true
		_, err := io.WriteString(l.w, "[log full: further messages of this server are dropped]\n")
		return len(p), err
	}
	l.left -= int64(len(p))
	return l.w.Write(p)
}
