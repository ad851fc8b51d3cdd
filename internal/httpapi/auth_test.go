package httpapi_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/httpapi"
)

func TestAuth(t *testing.T) {
	h := newHarness(t)
	port := h.host[strings.LastIndex(h.host, ":")+1:]
	tests := []struct {
		name    string
		path    string
		headers []string
		want    int
	}{
		{"token", "/v1/health", nil, http.StatusOK},
		{"no token", "/v1/health", []string{"Authorization", ""}, http.StatusUnauthorized},
		{"wrong token", "/v1/health", []string{"Authorization", "Bearer " + testToken + "x"}, http.StatusUnauthorized},
		{"token prefix", "/v1/health", []string{"Authorization", "Bearer " + testToken[:10]}, http.StatusUnauthorized},
		{"other scheme", "/v1/health", []string{"Authorization", "Basic " + testToken}, http.StatusUnauthorized},
		{"scheme in lower case", "/v1/health", []string{"Authorization", "bearer " + testToken}, http.StatusOK},
		{"events need the token", "/v1/events", []string{"Authorization", ""}, http.StatusUnauthorized},
		{"unknown API path needs the token", "/v1/nothing", []string{"Authorization", ""}, http.StatusUnauthorized},
		{"host localhost", "/v1/health", []string{"Host", "localhost:" + port}, http.StatusOK},
		{"host 127.0.0.1", "/v1/health", []string{"Host", "127.0.0.1:" + port}, http.StatusOK},
		{"host [::1]", "/v1/health", []string{"Host", "[::1]:" + port}, http.StatusOK},
		{"host LOCALHOST", "/v1/health", []string{"Host", "LOCALHOST:" + port}, http.StatusOK},
		{"rebound name", "/v1/health", []string{"Host", "attacker.example:" + port}, http.StatusForbidden},
		{"rebound name without port", "/v1/health", []string{"Host", "attacker.example"}, http.StatusForbidden},
		{"loopback on another port", "/v1/health", []string{"Host", "localhost:1"}, http.StatusForbidden},
		{"loopback without port", "/v1/health", []string{"Host", "localhost"}, http.StatusForbidden},
		{"wrong host comes before the token", "/v1/health", []string{"Host", "attacker.example", "Authorization", ""}, http.StatusForbidden},
		{"dashboard needs no token", "/", []string{"Authorization", ""}, http.StatusOK},
		{"dashboard checks the host", "/", []string{"Host", "attacker.example:" + port, "Authorization", ""}, http.StatusForbidden},
		{"dashboard script", "/app.js", []string{"Authorization", ""}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.request("GET", tt.path, nil, tt.headers...)
			if r.status != tt.want {
				t.Fatalf("GET %s = %d %s, want %d", tt.path, r.status, r.body, tt.want)
			}
			if r.status == http.StatusUnauthorized {
				if got := r.header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
					t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", got)
				}
			}
			if r.status >= 400 {
				body := r.object(t)
				if body["status"] != float64(tt.want) || body["error"] == "" {
					t.Errorf("error body = %s: want {error, status: %d}", r.body, tt.want)
				}
				if strings.Contains(string(r.body), testToken[:10]) {
					t.Errorf("the error echoes the token: %s", r.body)
				}
			}
			if r.header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("CORS header sent without --allow-origin: %q", r.header.Get("Access-Control-Allow-Origin"))
			}
		})
	}

	t.Run("dashboard headers", func(t *testing.T) {
		r := h.request("GET", "/", nil, "Authorization", "")
		if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("Content-Security-Policy = %q", csp)
		}
		if !strings.Contains(string(r.body), "<title>superagents</title>") {
			t.Errorf("/ is not the dashboard: %.200s", r.body)
		}
	})

	t.Run("no CORS without an allowed origin", func(t *testing.T) {
		r := h.request("GET", "/v1/health", nil, "Origin", "https://evil.example")
		if r.status != http.StatusOK || r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("GET with Origin = %d, ACAO %q: want 200 and no CORS header", r.status, r.header.Get("Access-Control-Allow-Origin"))
		}
	})
}

func TestCORSAllowsOneOrigin(t *testing.T) {
	const origin = "https://app.example.com"
	h := newHarness(t, withServer(func(o *httpapi.Options) { o.AllowOrigin = origin }))
	tests := []struct {
		name, method, origin string
		headers              []string
		wantStatus           int
		wantACAO             string
	}{
		{"allowed origin", "GET", origin, nil, http.StatusOK, origin},
		{"other origin", "GET", "https://evil.example", nil, http.StatusOK, ""},
		{"origin that only starts alike", "GET", origin + ".evil.example", nil, http.StatusOK, ""},
		{"preflight of the allowed origin", "OPTIONS", origin, []string{"Access-Control-Request-Method", "POST", "Authorization", ""}, http.StatusNoContent, origin},
		{"preflight of another origin", "OPTIONS", "https://evil.example", []string{"Access-Control-Request-Method", "POST", "Authorization", ""}, http.StatusUnauthorized, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.request(tt.method, "/v1/health", nil, append([]string{"Origin", tt.origin}, tt.headers...)...)
			if r.status != tt.wantStatus || r.header.Get("Access-Control-Allow-Origin") != tt.wantACAO {
				t.Fatalf("%s = %d, ACAO %q; want %d, %q", tt.method, r.status, r.header.Get("Access-Control-Allow-Origin"), tt.wantStatus, tt.wantACAO)
			}
			if tt.wantStatus == http.StatusNoContent && !strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "Authorization") {
				t.Errorf("preflight allows headers %q: want Authorization", r.header.Get("Access-Control-Allow-Headers"))
			}
		})
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	h := newHarness(t)
	base := httpapi.Options{Runtime: h.stack.Runtime, Token: testToken}
	tests := []struct {
		name   string
		change func(*httpapi.Options)
		want   string
	}{
		{"short token", func(o *httpapi.Options) { o.Token = "short" }, "token"},
		{"no runtime", func(o *httpapi.Options) { o.Runtime = nil }, "runtime"},
		{"wildcard origin", func(o *httpapi.Options) { o.AllowOrigin = "*" }, "origin"},
		{"origin with a path", func(o *httpapi.Options) { o.AllowOrigin = "https://a.example/x" }, "origin"},
		{"negative rate", func(o *httpapi.Options) { o.RateLimit = -1 }, "rate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := base
			tt.change(&opts)
			if _, err := httpapi.New(opts); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v, want an error about %s", err, tt.want)
			}
		})
	}
}

func TestToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	token, created, err := httpapi.LoadOrCreateToken(dir)
	if err != nil || !created || len(token) < 40 {
		t.Fatalf("first LoadOrCreateToken = %q, %v, %v: want a new long token", token, created, err)
	}
	info, err := os.Stat(filepath.Join(dir, httpapi.TokenFile))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, mode %v: want 0600", err, info.Mode().Perm())
	}
	again, created, err := httpapi.LoadOrCreateToken(dir)
	if err != nil || created || again != token {
		t.Fatalf("second LoadOrCreateToken = %q, %v, %v: want the same token", again, created, err)
	}
	other, _, _ := httpapi.LoadOrCreateToken(t.TempDir())
	if other == token {
		t.Fatal("two data directories got the same token")
	}
	if err := os.Chmod(filepath.Join(dir, httpapi.TokenFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := httpapi.LoadOrCreateToken(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable token file = %v, want it refused", err)
	}
}

// The API and MCP have a request budget each; the event stream and the
// dashboard's files are not counted, so a busy client cannot lock the
// dashboard out.
func TestRateLimit(t *testing.T) {
	mcp := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("mcp")) })
	h := newHarness(t, withServer(func(o *httpapi.Options) { o.RateLimit, o.RateBurst, o.MCP = 0.001, 2, mcp }))
	// In order: each budget holds 2 requests, refilled once in 1,000 s.
	steps := []struct {
		name, method, path string
		want               int
	}{
		{"MCP", "POST", "/mcp", http.StatusOK},
		{"MCP again", "POST", "/mcp", http.StatusOK},
		{"MCP over its budget", "POST", "/mcp", http.StatusTooManyRequests},
		{"the API has its own budget", "GET", "/v1/health", http.StatusOK},
		{"the API again", "GET", "/v1/tasks", http.StatusOK},
		{"the API over its budget", "GET", "/v1/health", http.StatusTooManyRequests},
		{"MCP still over its budget", "POST", "/mcp", http.StatusTooManyRequests},
		{"the dashboard page", "GET", "/", http.StatusOK},
		{"the dashboard script", "GET", "/app.js", http.StatusOK},
		{"the dashboard style", "GET", "/style.css", http.StatusOK},
	}
	for _, st := range steps {
		r := h.request(st.method, st.path, nil)
		if r.status != st.want {
			t.Fatalf("%s: %s %s = %d %s, want %d", st.name, st.method, st.path, r.status, r.body, st.want)
		}
		if r.status == http.StatusTooManyRequests && r.header.Get("Retry-After") == "" {
			t.Errorf("%s: 429 without Retry-After", st.name)
		}
	}
	// The event stream opens (and sends its snapshot) with the API's
	// budget spent.
	s := h.events("")
	if ev := s.next(t); ev.name != "snapshot" {
		t.Fatalf("first event = %q, want the snapshot", ev.name)
	}
}

// The MCP handler is mounted behind the same checks, and its GET streams
// end when the server shuts down.
func TestMCPMount(t *testing.T) {
	streaming := make(chan struct{})
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/mcp/stream" {
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
			close(streaming)
			<-r.Context().Done()
			return
		}
		w.Write([]byte("mcp " + r.Method + " " + r.URL.Path))
	})
	h := newHarness(t, withServer(func(o *httpapi.Options) { o.MCP = mcp }))
	port := h.host[strings.LastIndex(h.host, ":")+1:]
	tests := []struct {
		name, method, path string
		headers            []string
		want               int
	}{
		{"with the token", "POST", "/mcp", nil, http.StatusOK},
		{"a sub-path", "GET", "/mcp/x", nil, http.StatusOK},
		{"without the token", "POST", "/mcp", []string{"Authorization", ""}, http.StatusUnauthorized},
		{"wrong host", "POST", "/mcp", []string{"Host", "attacker.example:" + port}, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.request(tt.method, tt.path, nil, tt.headers...)
			if r.status != tt.want {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, r.status, r.body, tt.want)
			}
			if tt.want == http.StatusOK && string(r.body) != "mcp "+tt.method+" "+tt.path {
				t.Fatalf("body %q: the request did not reach the MCP handler", r.body)
			}
		})
	}

	done := make(chan response, 1)
	go func() { done <- h.request("GET", "/mcp/stream", nil) }()
	<-streaming
	if err := h.shutdown(); err != nil {
		t.Fatalf("shutdown with an MCP stream open: %v", err)
	}
	if r := <-done; r.status != http.StatusOK {
		t.Fatalf("MCP stream = %d", r.status)
	}
}
