package httpapi

import (
	"embed"
	"io/fs"
	"net/http"
)

// The dashboard is plain HTML, CSS and JavaScript, embedded in the
// binary: no build step, nothing fetched from elsewhere.
//
//go:embed dashboard
var dashboardFiles embed.FS

// dashboardPolicy lets the page load only its own files and talk only to
// this server; it can be framed by no one.
const dashboardPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (s *Server) dashboardRoutes(mux *http.ServeMux) {
	assets, _ := fs.Sub(dashboardFiles, "dashboard") // a fixed path in the embedded tree
	files := http.FileServerFS(assets)
	page := func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", dashboardPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}
	mux.HandleFunc("GET /{$}", page)
	mux.HandleFunc("GET /app.js", page)
	mux.HandleFunc("GET /style.css", page)
}
