package cli_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/cli"
	"github.com/superagents/superagents/internal/frontends"
	"github.com/superagents/superagents/internal/httpapi"
)

// TestServeTokenFromOutside: --token-file, then SUPERAGENTS_TOKEN, set the
// API token instead of the data directory's, so the nodes of a cluster
// share one; a bad one is refused without being quoted.
func TestServeTokenFromOutside(t *testing.T) {
	const good = "cluster-token-0123456789abcdef"
	const other = "another-token-0123456789abcdef"
	write := func(t *testing.T, content string, mode os.FileMode) string {
		path := filepath.Join(t.TempDir(), "token")
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name    string
		env     string
		file    func(t *testing.T) string
		want    string // the token printed
		wantErr string // or the error
	}{
		{name: "environment", env: good, want: good},
		{name: "environment, trimmed", env: " " + good + "\n", want: good},
		{name: "file", file: func(t *testing.T) string { return write(t, good+"\n", 0o600) }, want: good},
		{name: "file before environment", env: other, file: func(t *testing.T) string { return write(t, good, 0o600) }, want: good},
		{name: "short in environment", env: "short-secret", wantErr: "at least 16 characters"},
		{name: "spaces in environment", env: "two words in one token here", wantErr: "printable ASCII without spaces"},
		{name: "file others can read", file: func(t *testing.T) string { return write(t, good, 0o644) }, wantErr: "chmod 600"},
		{name: "empty file", file: func(t *testing.T) string { return write(t, "\n", 0o600) }, wantErr: "at least 16 characters"},
		{name: "missing file", file: func(t *testing.T) string { return filepath.Join(t.TempDir(), "none") }, wantErr: "--token-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			if tt.env != "" {
				h.env[cli.EnvToken] = tt.env
			}
			args := []string{"serve", "--print-token"}
			if tt.file != nil {
				args = append(args, "--token-file", tt.file(t))
			}
			r := h.run(args...)
			if tt.wantErr != "" {
				if r.code == cli.ExitOK || !strings.Contains(r.stderr, tt.wantErr) {
					t.Fatalf("serve %v = %d %q, want an error about %q", args, r.code, r.stderr, tt.wantErr)
				}
				if strings.Contains(r.stderr, strings.TrimSpace(tt.env)) && tt.env != "" {
					t.Fatalf("the error quotes the token: %q", r.stderr)
				}
				return
			}
			if r.code != cli.ExitOK || strings.TrimSpace(r.stdout) != tt.want {
				t.Fatalf("serve %v = %d, printed %q; want %q (%s)", args, r.code, r.stdout, tt.want, r.stderr)
			}
			// A token from outside makes none in the data directory.
			if _, err := os.Stat(filepath.Join(h.dataDir, httpapi.TokenFile)); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a token file was made in the data directory: %v", err)
			}
		})
	}
}

// TestServeAcceptsTheTokenFromOutside runs the server with
// SUPERAGENTS_TOKEN: requests that carry it get in, others do not.
func TestServeAcceptsTheTokenFromOutside(t *testing.T) {
	const token = "cluster-token-0123456789abcdef"
	h := newHarness(t)
	h.env[cli.EnvToken] = token
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var stderr syncBuffer
	exited := make(chan int, 1)
	go func() {
		exited <- frontends.Main(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--workspace", t.TempDir()}, cli.Env{
			Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr,
			Getenv: func(k string) string { return h.env[k] },
		})
	}()
	d := waitDiscovery(t, h.dataDir, exited, &stderr)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for _, tt := range []struct {
		bearer string
		want   int
	}{
		{token, http.StatusOK},
		{"not-the-token-0123456789abcdef", http.StatusUnauthorized},
		{"", http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest("GET", d.URL+"/v1/health", nil)
		if tt.bearer != "" {
			req.Header.Set("Authorization", "Bearer "+tt.bearer)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tt.want {
			t.Errorf("health with bearer %q = %d, want %d", tt.bearer, res.StatusCode, tt.want)
		}
	}
	stop()
	if code := <-exited; code != cli.ExitOK {
		t.Fatalf("serve exited with %d: %s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), token) || strings.Contains(stderr.String(), "A new API token") {
		t.Fatalf("the server's log quotes the token or made one: %s", stderr.String())
	}
}
