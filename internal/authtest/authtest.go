// Package authtest gives tests' HTTP clients an API token, as a host
// configured with the server's token presents it.
package authtest

import "net/http"

// Bearer returns a transport that sends token as a bearer token with
// every request, through next (http.DefaultTransport when nil).
func Bearer(token string, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return bearer{token: token, next: next}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
