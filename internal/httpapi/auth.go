package httpapi

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// TokenFile is the name of the token's file in the data directory.
const TokenFile = "server-token"

// LoadOrCreateToken returns the server's token, stored in dir: it is made
// on first use from 32 random bytes and written readable by its owner
// only. A token file others can read is refused rather than used.
func LoadOrCreateToken(dir string) (token string, created bool, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false, fmt.Errorf("token: data directory: %w", err)
	}
	path := filepath.Join(dir, TokenFile)
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // crypto/rand.Read never fails (Go 1.24+)
	fresh := base64.RawURLEncoding.EncodeToString(raw)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, werr := f.WriteString(fresh + "\n")
		if err := errors.Join(werr, f.Close()); err != nil {
			_ = os.Remove(path)
			return "", false, fmt.Errorf("token: write %s: %w", path, err)
		}
		return fresh, true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return "", false, fmt.Errorf("token: create %s: %w", path, err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", false, fmt.Errorf("token: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return "", false, fmt.Errorf("token: %s can be read by other users (mode %s): run chmod 600 on it, or delete it to make a new token", path, info.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false, fmt.Errorf("token: %w", err)
	}
	token = strings.TrimSpace(string(data))
	if len(token) < 16 {
		return "", false, fmt.Errorf("token: %s holds no usable token (at least 16 characters): delete it to make a new one", path)
	}
	return token, false, nil
}

// guard runs the checks every request goes through, in order: the Host
// header, CORS, the body cap, then for the API the token and the rate
// limit.
func (s *Server) guard(next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(s.opts.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			writeError(w, http.StatusForbidden, "host %q is not allowed: use the address the server listens on", r.Host)
			return
		}
		if s.cors(w, r) {
			return
		}
		if r.ContentLength > s.maxBody {
			writeError(w, http.StatusRequestEntityTooLarge, "the request body is larger than %d bytes", s.maxBody)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBody)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if needsToken(r.URL.Path) {
			w.Header().Set("Cache-Control", "no-store")
			// Comparing digests takes the same time whatever the length
			// or content of what was sent.
			got := sha256.Sum256([]byte(bearer(r)))
			if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="superagents"`)
				msg := "missing token: send Authorization: Bearer <token> (superagents serve --print-token prints it)"
				if r.Header.Get("Authorization") != "" {
					msg = "wrong token: send Authorization: Bearer <token> (superagents serve --print-token prints it)"
				}
				writeError(w, http.StatusUnauthorized, "%s", msg)
				return
			}
			if lim := s.limiterFor(r); lim != nil && !lim.Allow() {
				w.Header().Set("Retry-After", "1")
				writeError(w, http.StatusTooManyRequests, "too many requests: at most %g per second (serve --rate-limit)", s.opts.RateLimit)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// bearer returns the token of an Authorization header, "" when none.
func bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// allowedHosts lists the Host header values that name this server: the
// listen address and the loopback names, each with the listen port, plus
// extra names the operator allowed.
func allowedHosts(addr net.Addr, extra []string) map[string]bool {
	hosts := map[string]bool{}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return hosts
	}
	port := strconv.Itoa(tcp.Port)
	names := append([]string{"localhost", "127.0.0.1", "::1"}, extra...)
	if !tcp.IP.IsUnspecified() {
		names = append(names, tcp.IP.String())
	}
	for _, name := range names {
		name = strings.ToLower(strings.Trim(name, "[]"))
		hosts[net.JoinHostPort(name, port)] = true
		if port == "80" {
			hosts[name] = true
			if strings.Contains(name, ":") {
				hosts["["+name+"]"] = true
			}
		}
	}
	return hosts
}

// hostAllowed checks the Host header against the listen address, so that
// a web page whose name was rebound to 127.0.0.1 cannot reach the API.
func (s *Server) hostAllowed(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hosts[strings.ToLower(host)]
}

// checkOrigin validates --allow-origin: one exact scheme://host[:port].
func checkOrigin(origin string) error {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
		return fmt.Errorf("httpapi: allowed origin %q must be scheme://host[:port], like https://example.com (no wildcard, no path)", origin)
	}
	return nil
}

// cors adds CORS headers for the one allowed origin, and answers its
// preflight requests (reporting true when it did). Other origins get no
// CORS header, so browsers keep their pages out.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if s.opts.AllowOrigin == "" || origin != s.opts.AllowOrigin {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", "GET, POST")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID")
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	return false
}
