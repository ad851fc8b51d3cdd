package sandbox

import (
	"errors"
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// probeLandlock asks the kernel which Landlock ABI it offers.
func probeLandlock() Support {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		reason := "this kernel does not offer Landlock (Linux 5.13 or later, with landlock in the lsm= boot parameter)"
		if err != nil {
			reason += fmt.Sprintf(": %v", err)
		}
		return Support{Reason: reason}
	}
	// Network sockets are refused by seccomp (denySockets), on any ABI;
	// Landlock's TCP rules, where the ABI has them (4, Linux 6.7), come
	// on top.
	return Support{Mechanism: "Landlock", ABI: abi, Files: true, Network: true}
}

// landlockRuleset is a ruleset built but not yet applied.
type landlockRuleset struct {
	fd    int
	flags uint32
}

// landlockRuleset builds the rules' Landlock ruleset; the caller applies
// it with restrict once the process has given up its privileges.
func (r rules) landlockRuleset() (landlockRuleset, error) {
	cfg := landlock.Config{
		HandledAccessFS: landlock.V11.HandledAccessFS,
		// Signals to processes outside the sandbox are refused, so a
		// command cannot stop superagents or the user's programs.
		Scoped: landlock.V11.Scoped,
	}
	if !r.Network {
		cfg.HandledAccessNet = landlock.V11.HandledAccessNet
	} else {
		// Abstract Unix sockets are a way out to local servers, as TCP.
		cfg.Scoped &^= ll.ScopeAbstractUnixSocket
	}
	list := []landlock.Rule{
		// Read and run anything (but what isolate hid); reach any Unix
		// socket by its path.
		landlock.RODirs("/").WithResolveUnix(),
		landlock.RWFiles(devices()...).IgnoreIfMissing(),
	}
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return landlockRuleset{}, fmt.Errorf("this kernel does not offer Landlock (ABI %d): %v", abi, err)
	}
	if len(r.Writable) > 0 {
		rw := landlock.RWDirs(r.Writable...).IgnoreIfMissing()
		if abi >= 2 {
			// Moving files between directories of the workspace; on
			// ABI 1, asking for it would turn the whole rule set off.
			rw = rw.WithRefer()
		}
		list = append(list, rw)
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(list...)
	if err != nil {
		return landlockRuleset{}, err
	}
	if fd < 0 {
		return landlockRuleset{}, errors.New("the kernel's Landlock cannot enforce any of the rules")
	}
	return landlockRuleset{fd: fd, flags: flags}, nil
}

// restrict applies the ruleset to the calling thread, which has
// no_new_privs set.
func (l landlockRuleset) restrict() error {
	if err := ll.LandlockRestrictSelf(l.fd, l.flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

func (l landlockRuleset) close() { _ = unix.Close(l.fd) }
