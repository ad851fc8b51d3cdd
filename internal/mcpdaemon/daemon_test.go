package mcpdaemon_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/mcpdaemon"
)

func TestKeyHash(t *testing.T) {
	var a, b, c mcpdaemon.Key
	a.Add("workspace", "/w")
	a.Add("env ANTHROPIC_API_KEY", "sk-secret")
	b.Add("env ANTHROPIC_API_KEY", "sk-secret")
	b.Add("workspace", "/w")
	c.Add("workspace", "/w")
	c.Add("env ANTHROPIC_API_KEY", "sk-other")
	if a.Hash() != b.Hash() {
		t.Error("the order of the parts changes the hash")
	}
	if a.Hash() == c.Hash() {
		t.Error("another key has the same hash")
	}
	if strings.Contains(a.Hash(), "secret") || len(a.Hash()) != 20 {
		t.Errorf("hash %q", a.Hash())
	}
}

func TestPathsFor(t *testing.T) {
	run := t.TempDir()
	env := func(v string) func(string) string {
		return func(name string) string {
			if name == "XDG_RUNTIME_DIR" {
				return v
			}
			return ""
		}
	}
	p, err := mcpdaemon.PathsFor(env(run), t.TempDir(), "abc")
	if err != nil || p.Socket != filepath.Join(run, "superagents", "abc.sock") || p.Lock != filepath.Join(run, "superagents", "abc.lock") {
		t.Fatalf("%+v %v", p, err)
	}
	if info, err := os.Stat(p.Dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("directory %v %v", info.Mode(), err)
	}
	if got := mcpdaemon.PathsOf(p.Socket); got != p {
		t.Fatalf("PathsOf = %+v, want %+v", got, p)
	}
	// A data directory too deep for a socket's path: the temporary
	// directory serves.
	deep := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	p, err = mcpdaemon.PathsFor(env(""), deep, "abc")
	if err != nil || strings.HasPrefix(p.Socket, deep) || len(p.Socket) > 100 {
		t.Fatalf("%+v %v", p, err)
	}
	// $XDG_RUNTIME_DIR where no directory can be made (it is a file): the
	// data directory serves.
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	p, err = mcpdaemon.PathsFor(env(notDir), data, "abc")
	if err != nil || p.Socket != filepath.Join(data, "run", "abc.sock") {
		t.Fatalf("%+v %v", p, err)
	}
	// Neither $XDG_RUNTIME_DIR nor the data directory: the temporary
	// directory serves.
	p, err = mcpdaemon.PathsFor(env(notDir), notDir, "abc")
	if err != nil || p.Dir != filepath.Join(os.TempDir(), "superagents-"+strconv.Itoa(os.Getuid())) {
		t.Fatalf("%+v %v", p, err)
	}
}

func TestPathsForNone(t *testing.T) {
	// No directory can be made: the error says why (the last one's).
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", notDir)
	p, err := mcpdaemon.PathsFor(func(string) string { return notDir }, notDir, "abc")
	if err == nil || !strings.Contains(err.Error(), "background server directory") {
		t.Fatalf("%+v %v", p, err)
	}
}

func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.lock")
	l, ok, err := mcpdaemon.TryLock(path)
	if err != nil || !ok {
		t.Fatalf("first lock: %v %v", ok, err)
	}
	if b, _ := os.ReadFile(path); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("the lock holds %q", b)
	}
	if _, ok, err := mcpdaemon.TryLock(path); ok || err != nil {
		t.Fatalf("second lock taken: %v %v", ok, err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the lock file stays: %v", err)
	}
	l, ok, err = mcpdaemon.TryLock(path)
	if err != nil || !ok {
		t.Fatalf("lock after release: %v %v", ok, err)
	}
	l.Release()
}

// echo serves a connection by sending back each line.
func echo(_ context.Context, conn net.Conn) {
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		if _, err := conn.Write(append(sc.Bytes(), '\n')); err != nil {
			return
		}
	}
}

// TestServeIdle: the server serves connections, stays while it is busy,
// and exits once idle, removing its socket.
func TestServeIdle(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := mcpdaemon.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	var busyChecks atomic.Int32
	done := make(chan error, 1)
	go func() {
		done <- mcpdaemon.Serve(context.Background(), ln, mcpdaemon.ServeOptions{
			Handle: echo,
			Busy:   func(context.Context) (bool, error) { return busyChecks.Add(1) <= 3, nil },
			Idle:   20 * time.Millisecond,
		})
	}()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, "hello\n")
	if line, err := bufio.NewReader(conn).ReadString('\n'); line != "hello\n" {
		t.Fatalf("echo %q %v", line, err)
	}
	conn.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the server never exited")
	}
	if n := busyChecks.Load(); n <= 3 {
		t.Fatalf("the server exited while busy (%d checks)", n)
	}
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the socket stays: %v", err)
	}
}

// TestServeStops: a cancelled context ends the server and its sessions.
func TestServeStops(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := mcpdaemon.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- mcpdaemon.Serve(ctx, ln, mcpdaemon.ServeOptions{Handle: func(ctx context.Context, conn net.Conn) {
			stop := context.AfterFunc(ctx, func() { conn.Close() })
			defer stop()
			echo(ctx, conn)
		}})
	}()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "x\n")
	bufio.NewReader(conn).ReadString('\n')
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve = %v", err)
	}
}

// TestProxyRetries: a connection that ends before the server answered
// (a server that was exiting) is made again, and the new one gets what
// the host had sent.
func TestProxyRetries(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := mcpdaemon.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		first, err := ln.Accept()
		if err != nil {
			return
		}
		bufio.NewReader(first).ReadString('\n') // takes the request, answers nothing
		first.Close()
		second, err := ln.Accept()
		if err != nil {
			return
		}
		echo(context.Background(), second)
		second.Close()
	}()
	hostIn, hostWrites := io.Pipe()
	hostReads, out := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- mcpdaemon.Proxy(context.Background(), hostIn, out, func(context.Context) (net.Conn, error) {
			return net.Dial("unix", sock)
		})
		out.Close()
	}()
	// The host waits for its answer before it says more, as a host waits
	// for the answer to initialize.
	io.WriteString(hostWrites, "initialize\n")
	answer, err := bufio.NewReader(hostReads).ReadString('\n')
	if answer != "initialize\n" {
		t.Fatalf("the host got %q (%v)", answer, err)
	}
	hostWrites.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestProxyUnavailable: with no server, the proxy hands back everything
// the host sent, for the caller to serve.
func TestProxyUnavailable(t *testing.T) {
	hostIn, hostWrites := io.Pipe()
	go func() {
		io.WriteString(hostWrites, "first\n")
		io.WriteString(hostWrites, "second\n")
		hostWrites.Close()
	}()
	err := mcpdaemon.Proxy(context.Background(), hostIn, io.Discard, func(context.Context) (net.Conn, error) {
		return nil, errors.New("cannot start")
	})
	un, ok := errors.AsType[*mcpdaemon.UnavailableError](err)
	if !ok || un.Err.Error() != "cannot start" {
		t.Fatalf("Proxy = %v", err)
	}
	if all, _ := io.ReadAll(un.Input); string(all) != "first\nsecond\n" {
		t.Fatalf("input %q", all)
	}
}

// TestProxyHostHangsUp: a host that says nothing starts nothing.
func TestProxyHostHangsUp(t *testing.T) {
	err := mcpdaemon.Proxy(context.Background(), strings.NewReader(""), io.Discard, func(context.Context) (net.Conn, error) {
		t.Error("dialled for a host that said nothing")
		return nil, errors.New("no")
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLimitWriter(t *testing.T) {
	var buf bytes.Buffer
	w := mcpdaemon.LimitWriter(&buf, 10)
	for _, s := range []string{"12345", "67890", "more", "again"} {
		if n, err := io.WriteString(w, s); n != len(s) || err != nil {
			t.Fatalf("write %q: %d %v", s, n, err)
		}
	}
	if got := buf.String(); !strings.HasPrefix(got, "1234567890[log full") || strings.Contains(got, "again") {
		t.Fatalf("log %q", got)
	}
}

// TestProxyNoAnswer: a server that ends every connection unanswered is
// as good as none: the proxy hands back what the host sent.
func TestProxyNoAnswer(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	ln, err := mcpdaemon.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			bufio.NewReader(conn).ReadString('\n')
			conn.Close()
		}
	}()
	hostIn, hostWrites := io.Pipe()
	defer hostWrites.Close()
	go io.WriteString(hostWrites, "initialize\n")
	err = mcpdaemon.Proxy(context.Background(), hostIn, io.Discard, func(context.Context) (net.Conn, error) {
		return net.Dial("unix", sock)
	})
	un, ok := errors.AsType[*mcpdaemon.UnavailableError](err)
	if !ok {
		t.Fatalf("Proxy = %v", err)
	}
	got := make([]byte, len("initialize\n"))
	if _, err := io.ReadFull(un.Input, got); err != nil || string(got) != "initialize\n" {
		t.Fatalf("input %q %v", got, err)
	}
}
