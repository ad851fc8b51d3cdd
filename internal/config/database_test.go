package config

import (
	"strings"
	"testing"
)

func TestDatabaseURL(t *testing.T) {
	for _, tt := range []struct {
		name, file, want, wantErr string
	}{
		{"none", "", "", ""},
		{"postgres", "[database]\nurl = \"postgres://u@h:5432/db\"\n", "postgres://u@h:5432/db", ""},
		{"postgresql", "[database]\nurl = \"postgresql://u@h/db\"\n", "postgresql://u@h/db", ""},
		{"not postgres", "\n[database]\nurl = \"mysql://u:secret@h/db\"\n", "", ":3: database.url: want a postgres:// URL"},
		{"unknown key", "[database]\ndsn = \"x\"\n", "", ":2:1: database.dsn: unknown key"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := setup(t, "", tt.file, env{})
			opts.TrustProject = true
			cfg, err := Load(opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("error %q shows the URL's password", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Database.URL != tt.want {
				t.Errorf("database.url = %q, want %q", cfg.Database.URL, tt.want)
			}
		})
	}
}
