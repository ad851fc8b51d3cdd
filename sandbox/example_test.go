package sandbox_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"

	"github.com/superagents/superagents/sandbox"
)

// A mode comes from the configuration, an agent profile or the command
// line; the strictest of them applies.
func ExampleStrictest() {
	configured, err := sandbox.ParseMode(" workspace-write ")
	if err != nil {
		log.Fatal(err)
	}
	profile := sandbox.ReadOnly // the agent profile asks for less
	fmt.Println(sandbox.Strictest(configured, profile))
	fmt.Println(sandbox.Strictest(sandbox.Off, ""))
	fmt.Println(sandbox.Strictest()) // nothing named: the default

	_, err = sandbox.ParseMode("readonly")
	fmt.Println(err)
	// Output:
	// read-only
	// off
	// workspace-write
	// unknown sandbox mode "readonly" (want "workspace-write", "read-only" or "off")
}

// Looser tells whether a configuration (a project's, say) allows more than
// a base one, so that the caller can refuse or confirm it; Validate
// reports each bad value.
func ExampleConfig_Looser() {
	base := sandbox.DefaultConfig()
	for _, c := range []sandbox.Config{
		{Mode: sandbox.ReadOnly},
		{Mode: sandbox.WorkspaceWrite, Network: true},
		{Mode: sandbox.WorkspaceWrite, Writable: []string{"/srv/cache"}},
		{Mode: sandbox.Off},
	} {
		if key, looser := c.Looser(base); looser {
			fmt.Printf("%+v allows more: %s\n", c, key)
		} else {
			fmt.Printf("%+v allows no more\n", c)
		}
	}

	err := sandbox.Config{Mode: "strict", Writable: []string{"/srv/cache", "build"}}.Validate()
	var ce *sandbox.ConfigError
	fmt.Println(errors.As(err, &ce), ce.Key)
	fmt.Println(err)
	// Output:
	// {Mode:read-only Network:false Writable:[]} allows no more
	// {Mode:workspace-write Network:true Writable:[]} allows more: network
	// {Mode:workspace-write Network:false Writable:[/srv/cache]} allows more: writable
	// {Mode:off Network:false Writable:[]} allows more: mode
	// true mode
	// mode: unknown sandbox mode "strict" (want "workspace-write", "read-only" or "off")
	// writable: "build" is not an absolute path
}

// PrivatePaths are the directories of superagents' own that commands never
// see, found from the environment (here a fake one) and any paths given.
func ExamplePrivatePaths() {
	env := map[string]string{"HOME": "/home/ada", "XDG_DATA_HOME": "/data", "XDG_RUNTIME_DIR": "/run/user/1000"}
	getenv := func(key string) string { return env[key] }
	for _, p := range sandbox.PrivatePaths(getenv, "/srv/superagents/token") {
		// The directory of the sockets in the system's temporary directory
		// depends on the machine.
		if p == filepath.Join(os.TempDir(), "superagents-"+strconv.Itoa(os.Getuid())) {
			p = "$TMPDIR/superagents-$UID"
		}
		fmt.Println(p)
	}
	// Output:
	// /home/ada/.config/superagents
	// /data/superagents
	// /home/ada/.local/state/superagents
	// /run/user/1000/superagents
	// $TMPDIR/superagents-$UID
	// /srv/superagents/token
}

// Report is what `superagents sandbox check` prints; OK says whether every
// finding the policy requires is confined.
func ExampleReport() {
	r := sandbox.Report{
		Mode: sandbox.WorkspaceWrite,
		Support: sandbox.Support{Mechanism: "Landlock", ABI: 6, Files: true, Network: true,
			Reason: "this system gives commands no namespaces of their own"},
		Findings: []sandbox.Finding{
			{Name: "writes outside the workspace", Confined: true, Required: true, Detail: "permission denied"},
			{Name: "TCP connections", Confined: true, Required: true, Detail: "connect: permission denied"},
			{Name: "reads of a private file", Required: true, Detail: "read"},
		},
	}
	fmt.Println(r.OK())
	fmt.Print(r)
	// Output:
	// false
	// sandbox: mode "workspace-write", network not allowed
	// mechanism: Landlock (ABI 6)
	// missing: this system gives commands no namespaces of their own
	//   confined      writes outside the workspace: permission denied
	//   confined      TCP connections: connect: permission denied
	//   NOT CONFINED  reads of a private file: read
	// this system cannot enforce the configured sandbox: the lines marked NOT CONFINED are open to commands
}

// With the mode "off", New probes nothing and Command runs the command as
// it is; in the other modes Command confines it where the system can.
func ExampleSandbox_Command() {
	s, err := sandbox.New(sandbox.Policy{Mode: sandbox.Off}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Mode(), s.Enforced(), s.Network(), s.Warning() == "")
	cmd, err := s.Command([]string{"go", "version"}, []string{"HOME=/home/ada"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cmd.Args, cmd.Env)

	_, err = sandbox.New(sandbox.Policy{Mode: sandbox.ReadOnly, Workspace: "project"}, nil)
	fmt.Println(err)
	// Output:
	// off false true true
	// [go version] [HOME=/home/ada]
	// sandbox: the workspace "project" is not an absolute path
}
