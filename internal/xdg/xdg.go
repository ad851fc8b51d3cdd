// Package xdg finds superagents' own directories the XDG way, from an
// environment given as a function, so that commands and tests pass their
// own: $XDG_CONFIG_HOME and $XDG_DATA_HOME when they are absolute paths
// (the specification ignores relative ones), else under $HOME.
package xdg

import (
	"errors"
	"os"
	"path/filepath"
)

// App is the name of superagents' directories.
const App = "superagents"

// ConfigDir is $XDG_CONFIG_HOME/superagents, else
// $HOME/.config/superagents; without HOME, the home directory the system
// knows.
func ConfigDir(getenv func(string) string) (string, error) {
	return dir(getenv, "XDG_CONFIG_HOME", ".config")
}

// DataDir is $XDG_DATA_HOME/superagents, else
// $HOME/.local/share/superagents; without HOME, the home directory the
// system knows.
func DataDir(getenv func(string) string) (string, error) {
	return dir(getenv, "XDG_DATA_HOME", filepath.Join(".local", "share"))
}

// StateDir is $XDG_STATE_HOME/superagents, else
// $HOME/.local/state/superagents. superagents keeps nothing there yet; the
// sandbox hides it from commands all the same.
func StateDir(getenv func(string) string) (string, error) {
	return dir(getenv, "XDG_STATE_HOME", filepath.Join(".local", "state"))
}

func dir(getenv func(string) string, variable, underHome string) (string, error) {
	if base := getenv(variable); filepath.IsAbs(base) {
		return filepath.Join(base, App), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil || h == "" {
			return "", errors.New("cannot find the home directory: set HOME or " + variable)
		}
		home = h
	}
	return filepath.Join(home, underHome, App), nil
}
