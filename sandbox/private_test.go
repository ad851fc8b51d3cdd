package sandbox_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/superagents/superagents/internal/golden"
	"github.com/superagents/superagents/sandbox"
)

func TestPrivatePaths(t *testing.T) {
	tmp := filepath.Join(os.TempDir(), "superagents-"+strconv.Itoa(os.Getuid()))
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		env   map[string]string
		extra []string
		want  []string
	}{
		{"home only", map[string]string{"HOME": "/home/u"}, nil,
			[]string{"/home/u/.config/superagents", "/home/u/.local/share/superagents", "/home/u/.local/state/superagents", tmp}},
		{"XDG directories and the runtime directory", map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/c", "XDG_DATA_HOME": "/d", "XDG_STATE_HOME": "/s", "XDG_RUNTIME_DIR": "/run/user/1"}, nil,
			[]string{"/c/superagents", "/d/superagents", "/s/superagents", "/run/user/1/superagents", tmp}},
		{"a relative runtime directory is ignored", map[string]string{"HOME": "/home/u", "XDG_RUNTIME_DIR": "run"}, nil,
			[]string{"/home/u/.config/superagents", "/home/u/.local/share/superagents", "/home/u/.local/state/superagents", tmp}},
		{"a data directory given, relative made absolute, empty skipped", map[string]string{"HOME": "/home/u"}, []string{"/srv/sa", "", "rel/data"},
			[]string{"/home/u/.config/superagents", "/home/u/.local/share/superagents", "/home/u/.local/state/superagents", tmp, "/srv/sa", filepath.Join(wd, "rel/data")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sandbox.PrivatePaths(func(k string) string { return tc.env[k] }, tc.extra...)
			if !slices.Equal(got, tc.want) {
				t.Errorf("PrivatePaths = %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestReportString: what `superagents sandbox check` prints, confined and
// not (golden files).
func TestReportString(t *testing.T) {
	full := sandbox.Support{Mechanism: "Landlock", ABI: 7, Files: true, Network: true, Isolation: true, IsolationKind: "user, mount and PID namespaces"}
	partial := sandbox.Support{Mechanism: "Landlock", ABI: 7, Files: true, Network: true, Reason: "this system gives commands no namespaces of their own"}
	for _, tc := range []struct {
		file   string
		report sandbox.Report
		ok     bool
	}{
		{"report-confined.txt", sandbox.Report{Mode: sandbox.WorkspaceWrite, Support: full, Findings: []sandbox.Finding{
			{Name: "writes outside the workspace", Confined: true, Required: true, Detail: "permission denied"},
			{Name: "UDP sockets", Confined: true, Required: true, Detail: "socket: permission denied"},
		}}, true},
		{"report-open.txt", sandbox.Report{Mode: sandbox.WorkspaceWrite, Network: true, Support: partial, Findings: []sandbox.Finding{
			{Name: "UDP sockets", Confined: false, Required: false, Detail: "opened"},
			{Name: "reads of a private file", Confined: false, Required: true, Detail: "read"},
		}}, false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			if tc.report.OK() != tc.ok {
				t.Errorf("OK() = %v, want %v", tc.report.OK(), tc.ok)
			}
			golden.Check(t, tc.file, []byte(tc.report.String()))
		})
	}
}
