package cli

import (
	"fmt"
	"os"
	"strings"
	"unicode"

	"github.com/superagents/superagents/httpapi"
)

// EnvToken names the environment variable that sets the API token, so
// that every node of a cluster accepts the same one.
const EnvToken = "SUPERAGENTS_TOKEN"

// minTokenLen is the shortest token accepted from outside, as for the
// token file of the data directory.
const minTokenLen = 16

// serveToken returns the API token: the one --token-file holds, else
// SUPERAGENTS_TOKEN, else the data directory's (made on first start).
// created says the data directory's was just made.
func (a *app) serveToken(dir, tokenFile string) (token string, created bool, err error) {
	if tokenFile != "" {
		info, err := os.Stat(tokenFile)
		if err != nil {
			return "", false, fmt.Errorf("--token-file: %w", err)
		}
		if info.Mode().Perm()&0o077 != 0 {
			return "", false, fmt.Errorf("--token-file: %s can be read by other users (mode %s): run chmod 600 on it",
				tokenFile, info.Mode().Perm())
		}
		data, err := os.ReadFile(tokenFile)
		if err != nil {
			return "", false, fmt.Errorf("--token-file: %w", err)
		}
		token, err := checkToken(string(data))
		if err != nil {
			return "", false, fmt.Errorf("--token-file %s: %w", tokenFile, err)
		}
		return token, false, nil
	}
	if env := a.env.Getenv(EnvToken); env != "" {
		token, err := checkToken(env)
		if err != nil {
			return "", false, fmt.Errorf("%s: %w", EnvToken, err)
		}
		return token, false, nil
	}
	return httpapi.LoadOrCreateToken(dir)
}

// checkToken trims a token given from outside and checks that it can be
// sent in an Authorization header. The error never quotes it: it is a
// secret.
func checkToken(raw string) (string, error) {
	token := strings.TrimSpace(raw)
	if len(token) < minTokenLen {
		return "", fmt.Errorf("the token must have at least %d characters (it has %d)", minTokenLen, len(token))
	}
	for _, r := range token {
		if r > unicode.MaxASCII || !unicode.IsGraphic(r) || unicode.IsSpace(r) {
			return "", fmt.Errorf("the token must be printable ASCII without spaces")
		}
	}
	return token, nil
}
