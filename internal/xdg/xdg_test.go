package xdg

import (
	"path/filepath"
	"testing"
)

func TestDirs(t *testing.T) {
	tests := []struct {
		name                string
		env                 map[string]string
		config, data, state string
	}{
		{"home only", map[string]string{"HOME": "/home/u"}, "/home/u/.config/superagents", "/home/u/.local/share/superagents", "/home/u/.local/state/superagents"},
		{"xdg set", map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg", "XDG_DATA_HOME": "/data", "XDG_STATE_HOME": "/state"}, "/cfg/superagents", "/data/superagents", "/state/superagents"},
		{"relative xdg ignored", map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "cfg", "XDG_DATA_HOME": "data", "XDG_STATE_HOME": "state"}, "/home/u/.config/superagents", "/home/u/.local/share/superagents", "/home/u/.local/state/superagents"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			if got, err := ConfigDir(getenv); err != nil || got != filepath.FromSlash(tt.config) {
				t.Errorf("ConfigDir = %q, %v; want %q", got, err, tt.config)
			}
			if got, err := DataDir(getenv); err != nil || got != filepath.FromSlash(tt.data) {
				t.Errorf("DataDir = %q, %v; want %q", got, err, tt.data)
			}
			if got, err := StateDir(getenv); err != nil || got != filepath.FromSlash(tt.state) {
				t.Errorf("StateDir = %q, %v; want %q", got, err, tt.state)
			}
		})
	}
}
