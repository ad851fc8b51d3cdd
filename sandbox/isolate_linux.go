package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// isolation is how a command gets namespaces of its own: new mount and
// PID namespaces, and a user namespace that maps the user to itself when
// superagents is not root (or, as root, lacks CAP_SYS_ADMIN).
type isolation struct{ userNS bool }

func (iso isolation) String() string {
	if iso.userNS {
		return "user, mount and PID namespaces"
	}
	return "mount and PID namespaces"
}

// attr are the attributes that start the launcher in the namespaces.
func (iso isolation) attr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWPID}
	if iso.userNS {
		a.Cloneflags |= syscall.CLONE_NEWUSER
		uid, gid := os.Getuid(), os.Getgid()
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		// The user is not root in the namespace either, so exec would
		// drop the capabilities the launcher needs for its mounts
		// (and to drop the bounding set) but for these.
		a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
	}
	return a
}

// isolationSupport is the isolation this system offers, found once per
// process by starting the launcher in it (a few milliseconds): whether
// namespaces may be made depends on the kernel, its settings
// (user.max_user_namespaces, AppArmor's restriction of unprivileged user
// namespaces) and a container's seccomp profile, which only trying tells.
var isolationSupport = sync.OnceValues(probeIsolation)

func probeIsolation() (isolation, error) {
	self, err := selfExecutable()
	if err != nil {
		return isolation{}, err
	}
	candidates := []isolation{{userNS: true}}
	if os.Geteuid() == 0 {
		candidates = []isolation{{}, {userNS: true}}
	}
	var errs []error
	for _, iso := range candidates {
		if err := iso.try(self); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", iso, err))
			continue
		}
		return iso, nil
	}
	return isolation{}, fmt.Errorf("this system gives commands no namespaces of their own (%w)", errors.Join(errs...))
}

// try starts the launcher in the namespaces, making the mounts a command
// gets (a directory hidden, one kept in place, one kept read-only), and
// reports whether it could confine itself.
func (iso isolation) try(self string) error {
	dir, err := os.MkdirTemp("", "superagents-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	hidden, kept := filepath.Join(dir, "hidden"), filepath.Join(dir, "kept")
	for _, d := range []string{hidden, kept} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	spec, err := json.Marshal(rules{Network: true, Isolate: true, Private: []string{hidden}, Pin: []string{dir}, ReadOnly: []string{kept}, Probe: true})
	if err != nil {
		return err
	}
	cmd := &exec.Cmd{
		Path:        self,
		Args:        []string{launcherArg0, "/", "probe"},
		Env:         []string{rulesEnv + "=" + string(spec)},
		SysProcAttr: iso.attr(),
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		if msg := bytes.TrimSpace(out); len(msg) > 0 {
			return fmt.Errorf("%w: %s", err, msg)
		}
		return err
	}
	return nil
}

// isolate sets up the launcher's mount namespace: its mounts stay in it,
// Private is hidden under empty read-only mounts (the workspace bound
// back where it lies below one), and /proc shows this PID namespace
// only, so that no process outside the sandbox can be read from it.
func (r rules) isolate() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	hidden := r.hidden()
	var exposed []held
	for _, dir := range r.Expose {
		if !slices.ContainsFunc(hidden, func(h string) bool { return within(dir, h) }) {
			continue
		}
		fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("keep the workspace %s: %w", dir, err)
		}
		defer unix.Close(fd)
		exposed = append(exposed, held{path: dir, fd: fd})
	}
	var dirs []string
	for _, path := range hidden {
		isDir, err := hide(path)
		if err != nil {
			return err
		}
		if isDir {
			dirs = append(dirs, path)
		}
	}
	for _, e := range exposed {
		if err := e.bind(); err != nil {
			return err
		}
	}
	for _, dir := range dirs {
		if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("make the mount over %s read-only: %w", dir, err)
		}
	}
	for _, path := range r.Pin {
		if err := bindSelf(path); err != nil {
			return err
		}
	}
	for _, path := range r.ReadOnly {
		if err := bindSelf(path); err != nil {
			return err
		}
		if err := readOnlyMount(path); err != nil {
			return err
		}
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount a /proc of the sandbox's own: %w", err)
	}
	return enterAgain()
}

// enterAgain changes to the working directory again, by its path: the
// directory the process started in is the one below the mounts made
// since, and paths relative to it would not meet them (a relative
// .mcp.json would be writable, and .. from a workspace below a hidden
// directory would lead into it).
func enterAgain() error {
	wd, err := unix.Getwd()
	if err != nil {
		return fmt.Errorf("find the working directory: %w", err)
	}
	if err := unix.Chdir(wd); err != nil {
		return fmt.Errorf("enter the working directory %s again: %w", wd, err)
	}
	return nil
}

// hidden are the private paths that exist, but those below another.
func (r rules) hidden() []string {
	paths := slices.Clone(r.Private)
	slices.SortFunc(paths, func(a, b string) int { return len(a) - len(b) })
	var out []string
	for _, p := range paths {
		if slices.ContainsFunc(out, func(h string) bool { return within(p, h) }) {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// hide mounts an empty directory over a directory, /dev/null over a file.
func hide(path string) (isDir bool, err error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("hide %s: %w", path, err)
	}
	if info.IsDir() {
		err = unix.Mount("tmpfs", path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=64k,mode=0755")
	} else {
		err = unix.Mount("/dev/null", path, "", unix.MS_BIND, "")
	}
	if err != nil {
		return false, fmt.Errorf("hide %s: %w", path, err)
	}
	return info.IsDir(), nil
}

// shields are the mounts that keep the workspace's protected paths as
// they are (see rules.Pin and rules.ReadOnly), found when a command
// starts: a protected path may have appeared since the sandbox was made.
// A protected path that is a symbolic link is kept read-only where it
// leads, when that is writable; the link itself is put back by Guard.
func (s *Sandbox) shields() (pin, readOnly []string) {
	if s.policy.Mode != WorkspaceWrite {
		return nil, nil
	}
	ws := realPath(s.policy.Workspace)
	if ws != "/" { // a mount over / is not met from the process's root
		pin = append(pin, ws)
	}
	git := filepath.Join(ws, gitName)
	if info, err := os.Lstat(git); err == nil {
		switch {
		case info.IsDir():
			pin = append(pin, git)
		case info.Mode().IsRegular():
			readOnly = append(readOnly, git)
		}
	}
	for _, p := range protectedPaths(ws) {
		real, err := filepath.EvalSymlinks(p)
		if err != nil || !slices.ContainsFunc(s.writable, func(w string) bool { return within(real, w) }) {
			continue // absent, or out of the command's reach anyway
		}
		readOnly = append(readOnly, real)
	}
	return pin, readOnly
}

// bindSelf binds a path on itself: a mount point can be neither renamed
// nor removed.
func bindSelf(path string) error {
	if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("keep %s in place: %w", path, err)
	}
	return nil
}

// readOnlyMount makes the mount at path (and those below it) read-only.
// mount_setattr changes that flag alone; the older remount must repeat
// the flags a user namespace may not drop (nosuid, nodev, ...).
func readOnlyMount(path string) error {
	err := unix.MountSetattr(unix.AT_FDCWD, path, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY})
	if errors.Is(err, unix.ENOSYS) {
		var st unix.Statfs_t
		if err = unix.Statfs(path, &st); err == nil {
			flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY)
			for _, f := range []struct{ st, ms uintptr }{
				{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
				{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
			} {
				if uintptr(st.Flags)&f.st != 0 {
					flags |= f.ms
				}
			}
			err = unix.Mount("", path, "", flags, "")
		}
	}
	if err != nil {
		return fmt.Errorf("make %s read-only: %w", path, err)
	}
	return nil
}

// held is a directory kept open across the mount that hides it.
type held struct {
	path string
	fd   int
}

// bind makes the directory reachable again at its path.
func (h held) bind() error {
	if err := os.MkdirAll(h.path, 0o755); err != nil {
		return fmt.Errorf("keep the workspace %s: %w", h.path, err)
	}
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(h.fd), h.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("keep the workspace %s: %w", h.path, err)
	}
	return nil
}

// Security bits (linux/securebits.h): root is an ordinary user, for good.
const (
	secbitNoRoot                 = 1 << 0
	secbitNoRootLocked           = 1 << 1
	secbitNoSetuidFixup          = 1 << 2
	secbitNoSetuidFixupLocked    = 1 << 3
	secbitKeepCapsLocked         = 1 << 5
	secbitNoCapAmbientRaise      = 1 << 6
	secbitNoCapAmbientRaiseLockd = 1 << 7
)

// dropPrivileges gives up every capability (bounding, permitted,
// effective, inheritable and ambient) for good, and sets no_new_privs, so
// that neither root's rights nor a set-user-ID program's reach the
// command.
func dropPrivileges() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear the ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var caps [2]unix.CapUserData
	if err := unix.Capget(&hdr, &caps[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if caps[0].Effective&(1<<unix.CAP_SETPCAP) != 0 {
		// Without CAP_SETPCAP the process has no capability to lose
		// here: no bounding set matters once no_new_privs is set.
		for c := 0; ; c++ {
			if _, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err != nil {
				break // EINVAL: past the last capability
			}
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
				return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
			}
		}
		bits := secbitNoRoot | secbitNoRootLocked | secbitNoSetuidFixup | secbitNoSetuidFixupLocked |
			secbitKeepCapsLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLockd
		if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits), 0, 0, 0); err != nil {
			return fmt.Errorf("prctl(PR_SET_SECUREBITS): %w", err)
		}
	}
	caps = [2]unix.CapUserData{}
	if err := unix.Capset(&hdr, &caps[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	return nil
}
