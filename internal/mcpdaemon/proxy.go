package mcpdaemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// UnavailableError says that no server could be reached or started.
// Input reads everything the host sent and will send, for the caller to
// serve the session itself.
type UnavailableError struct {
	Err   error
	Input io.Reader
}

func (e *UnavailableError) Error() string { return "no background server: " + e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// Dial connects to the server listening at socket, starting it with
// start when none answers.
func Dial(ctx context.Context, socket string, start func(context.Context) error) (net.Conn, error) {
	if conn, err := net.Dial("unix", socket); err == nil {
		return conn, nil
	}
	if err := start(ctx); err != nil {
		return nil, err
	}
	conn, err := net.Dial("unix", socket)
	if err != nil {
		return nil, fmt.Errorf("connect to the background server: %w", err)
	}
	return conn, nil
}

// attempts bounds the connections one session tries: a server that was
// exiting as the proxy connected ends the connection unanswered.
const attempts = 3

// drainWait bounds how long, once the host's input ended, the proxy waits
// for the server's last answers.
const drainWait = 10 * time.Second

// Proxy copies the host's messages from in to a server (dial) and the
// server's to out, until the host's input ends and the server has
// closed the connection, the server ends it, out fails, or ctx ends. It
// dials once the host has sent something (a host that hangs up at once
// starts nothing). A connection that ends before the server said
// anything, while the host still talks, is made again and given what the
// host had sent. When no server can be reached, or none answers, it
// returns an *UnavailableError.
func Proxy(ctx context.Context, in io.Reader, out io.Writer, dial func(context.Context) (net.Conn, error)) error {
	src := newPump(in)
	if !src.wait(ctx) {
		return nil // the host hung up before it said anything
	}
	for try := 1; ; try++ {
		conn, err := dial(ctx)
		if err != nil {
			return &UnavailableError{Err: err, Input: src.rest()}
		}
		answered, hostDone := src.session(ctx, conn, out)
		if answered || hostDone || ctx.Err() != nil {
			return nil
		}
		if try == attempts {
			return &UnavailableError{Err: errors.New("the background server ends every connection unanswered"), Input: src.rest()}
		}
	}
}

// pump reads the host's input in the background. What it read stays
// kept until the server has answered, so that it can be given again to
// another connection.
type pump struct {
	chunks chan []byte // closed at the end of the input

	mu       sync.Mutex
	sent     bytes.Buffer // what went to a server that has not answered yet
	answered bool
	pending  []byte // a chunk taken from chunks and not yet sent
}

func newPump(in io.Reader) *pump {
	p := &pump{chunks: make(chan []byte, 1)}
	go func() {
		defer close(p.chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := in.Read(buf)
			if n > 0 {
				p.chunks <- buf[:n]
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

// wait waits for the host's first bytes; false when its input ended
// first.
func (p *pump) wait(ctx context.Context) bool {
	select {
	case chunk, ok := <-p.chunks:
		if !ok {
			return false
		}
		p.pending = chunk
		return true
	case <-ctx.Done():
		return false
	}
}

// session copies both ways over one connection, until the server ends
// it, out fails (the host stopped reading: the session is over) or ctx
// ends (a signal: a normal end). answered says whether the server wrote
// anything, hostDone whether the host's input ended and was passed on
// whole.
func (p *pump) session(ctx context.Context, conn net.Conn, out io.Writer) (answered, hostDone bool) {
	defer conn.Close()
	stopWriting := make(chan struct{})
	writerDone := make(chan bool, 1) // whether the host's input ended
	go func() { writerDone <- p.write(conn, stopWriting) }()
	stopCtx := context.AfterFunc(ctx, func() { conn.Close() })
	defer stopCtx()

	w := &firstWrite{w: out, p: p}
	_, _ = io.Copy(w, conn) // how the connection ended changes nothing
	close(stopWriting)
	conn.Close()
	return w.wrote, <-writerDone
}

// write sends what the server has not answered yet, then the host's
// input as it comes, until stop; at the end of the input it closes the
// connection's writing side, so that the server ends the session, and
// returns true.
func (p *pump) write(conn net.Conn, stop <-chan struct{}) bool {
	p.mu.Lock()
	replay := bytes.Clone(p.sent.Bytes())
	p.mu.Unlock()
	if len(replay) > 0 {
		if _, err := conn.Write(replay); err != nil {
			return false
		}
	}
	for {
		p.mu.Lock()
		chunk := p.pending
		p.pending = nil
		p.mu.Unlock()
		if chunk == nil {
			var ok bool
			select {
			case chunk, ok = <-p.chunks:
				if !ok {
					if uc, isUnix := conn.(*net.UnixConn); isUnix {
						uc.CloseWrite()
					}
					// The server closes the connection once it has
					// answered; do not wait for a stuck one forever.
					conn.SetReadDeadline(time.Now().Add(drainWait))
					return true
				}
			case <-stop:
				return false
			}
		}
		p.mu.Lock()
		if !p.answered {
			p.sent.Write(chunk)
		}
		p.mu.Unlock()
		if _, err := conn.Write(chunk); err != nil {
			return false
		}
	}
}

// rest reads what the host sent and will send: for a session served by
// the caller.
func (p *pump) rest() io.Reader {
	p.mu.Lock()
	defer p.mu.Unlock()
	head := append(bytes.Clone(p.sent.Bytes()), p.pending...)
	p.pending = nil
	return io.MultiReader(bytes.NewReader(head), &chanReader{chunks: p.chunks})
}

// chanReader reads the pump's chunks.
type chanReader struct {
	chunks <-chan []byte
	buf    []byte
}

func (r *chanReader) Read(b []byte) (int, error) {
	for len(r.buf) == 0 {
		chunk, ok := <-r.chunks
		if !ok {
			return 0, io.EOF
		}
		r.buf = chunk
	}
	n := copy(b, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// firstWrite writes the server's bytes to the host and, at the first,
// forgets what was kept for another connection.
type firstWrite struct {
	w     io.Writer
	p     *pump
	wrote bool
}

func (f *firstWrite) Write(b []byte) (int, error) {
	if !f.wrote {
		f.wrote = true
		f.p.mu.Lock()
		f.p.answered = true
		f.p.sent = bytes.Buffer{}
		f.p.mu.Unlock()
	}
	return f.w.Write(b)
}
