package hosts_test

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/superagents/superagents/internal/hosttest"
)

// envBinary names a superagents command to test instead of building one.
const envBinary = "SUPERAGENTS_HOSTS_BINARY"

// build is the superagents command, built once for the package's tests
// when the first test that needs it runs (none does when the hosts are
// not installed and the tests skip).
var build struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// superagents returns the superagents command the hosts run.
func superagents(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(envBinary); bin != "" {
		return bin
	}
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "superagents-hosts-")
		if build.err == nil {
			build.bin, build.err = hosttest.BuildSuperagents(context.Background(), build.dir)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

// newHost installs the host (skipping the test when it is not installed)
// with the superagents command as its MCP server.
func newHost(t *testing.T, host string, o hosttest.Options) *hosttest.Host {
	t.Helper()
	hosttest.Binary(t, host)
	o.Superagents = superagents(t)
	return hosttest.New(t, host, o)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	os.Exit(code)
}
