package cli

import (
	"fmt"
	"os"
	"strings"
	"unicode"
)

// EnvToken names the environment variable that sets the API token, so
// that every node of a cluster accepts the same one.
const EnvToken = "SUPERAGENTS_TOKEN"

// minTokenLen is the shortest token accepted from outside, as for the
// token file of the data directory.
const minTokenLen = 16

// tokenFromOutside returns the API token given from outside: the one
// --token-file holds, else SUPERAGENTS_TOKEN; empty when neither is set
// (the server then uses the data directory's).
func (a *app) tokenFromOutside(tokenFile string) (string, error) {
	if tokenFile != "" {
		info, err := os.Stat(tokenFile)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		if info.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("--token-file: %s can be read by other users (mode %s): run chmod 600 on it",
				tokenFile, info.Mode().Perm())
		}
		data, err := os.ReadFile(tokenFile)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		token, err := checkToken(string(data))
		if err != nil {
			return "", fmt.Errorf("--token-file %s: %w", tokenFile, err)
		}
		return token, nil
	}
	if env := a.env.Getenv(EnvToken); env != "" {
		token, err := checkToken(env)
		if err != nil {
			return "", fmt.Errorf("%s: %w", EnvToken, err)
		}
		return token, nil
	}
	return "", nil
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
