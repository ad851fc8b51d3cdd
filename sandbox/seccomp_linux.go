package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A seccomp filter refuses, when the network is not allowed, every
// socket but Unix ones: Landlock's network rules cover TCP's connect and
// bind only, and leave Multipath TCP, UDP (DNS included), SCTP, raw and
// packet sockets open. It is what Codex installs on Linux too. io_uring
// is refused as well, since its socket operations bypass seccomp.
//
// The filter is classic BPF over struct seccomp_data (linux/seccomp.h):
// the system call's number at offset 0, the architecture at 4, the
// arguments from 16, 8 bytes each (their low half first on the
// little-endian architectures supported).
const (
	seccompDataNr   = 0
	seccompDataArch = 4
	seccompDataArg0 = 16
	// x32SyscallBit marks x32 system calls on x86-64: the same calls
	// under other numbers, refused outright.
	x32SyscallBit = 0x40000000
)

// errSocketDenied is the refusal: EACCES, "Permission denied", as socket(2)
// documents for a socket type or protocol the caller may not create, and
// as Landlock refuses a TCP connection.
const errSocketDenied = unix.EACCES

// seccompArch is the native architecture's system calls the filter
// checks, and those of the 32-bit architecture its kernel also runs.
type seccompArch struct {
	audit                       uint32
	socket, socketpair, ioURing uint32
	compatAudit                 uint32
	compatDenied                []uint32 // every socket call, whatever its family
	x32                         bool
}

// nativeArch returns the architecture's numbers; the filter exists for
// x86-64 and arm64, the supported architectures.
func nativeArch() (seccompArch, error) {
	switch runtime.GOARCH {
	case "amd64":
		// i386: socketcall 102, socket 359, socketpair 360,
		// io_uring_setup 425 (arch/x86/entry/syscalls/syscall_32.tbl).
		return seccompArch{audit: unix.AUDIT_ARCH_X86_64, socket: unix.SYS_SOCKET, socketpair: unix.SYS_SOCKETPAIR,
			ioURing: unix.SYS_IO_URING_SETUP, compatAudit: unix.AUDIT_ARCH_I386, compatDenied: []uint32{102, 359, 360, 425}, x32: true}, nil
	case "arm64":
		// arm: socket 281, socketpair 288, io_uring_setup 425
		// (arch/arm/tools/syscall.tbl).
		return seccompArch{audit: unix.AUDIT_ARCH_AARCH64, socket: unix.SYS_SOCKET, socketpair: unix.SYS_SOCKETPAIR,
			ioURing: unix.SYS_IO_URING_SETUP, compatAudit: unix.AUDIT_ARCH_ARM, compatDenied: []uint32{281, 288, 425}}, nil
	}
	return seccompArch{}, fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
}

// bpf builds a program with jumps by label: j(label) is resolved to a
// relative offset when the program ends.
type bpf struct {
	prog   []unix.SockFilter
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at     int
	jt, jf string
}

func (b *bpf) stmt(code uint16, k uint32) {
	b.prog = append(b.prog, unix.SockFilter{Code: code, K: k})
}

// jeq jumps to jt when the accumulator equals k, else to jf ("" falls
// through).
func (b *bpf) jeq(k uint32, jt, jf string) { b.jump(unix.BPF_JEQ, k, jt, jf) }

// jge jumps to jt when the accumulator is k or more, else to jf.
func (b *bpf) jge(k uint32, jt, jf string) { b.jump(unix.BPF_JGE, k, jt, jf) }

func (b *bpf) jump(op uint16, k uint32, jt, jf string) {
	b.fixups = append(b.fixups, fixup{at: len(b.prog), jt: jt, jf: jf})
	b.prog = append(b.prog, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
}

func (b *bpf) label(name string) {
	if b.labels == nil {
		b.labels = map[string]int{}
	}
	b.labels[name] = len(b.prog)
}

func (b *bpf) load(offset uint32) { b.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offset) }
func (b *bpf) ret(k uint32)       { b.stmt(unix.BPF_RET|unix.BPF_K, k) }

// program resolves the jumps: they only go forward, at most 255 places.
func (b *bpf) program() ([]unix.SockFilter, error) {
	offset := func(from int, label string) (uint8, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := b.labels[label]
		if !ok || to <= from || to-from-1 > 255 {
			return 0, fmt.Errorf("seccomp filter: bad jump to %q", label)
		}
		return uint8(to - from - 1), nil
	}
	for _, f := range b.fixups {
		var err error
		if b.prog[f.at].Jt, err = offset(f.at, f.jt); err != nil {
			return nil, err
		}
		if b.prog[f.at].Jf, err = offset(f.at, f.jf); err != nil {
			return nil, err
		}
	}
	return b.prog, nil
}

// socketFilter is the filter denySockets installs.
func socketFilter() ([]unix.SockFilter, error) {
	a, err := nativeArch()
	if err != nil {
		return nil, err
	}
	deny := unix.SECCOMP_RET_ERRNO | uint32(errSocketDenied)
	var b bpf
	b.load(seccompDataArch)
	b.jeq(a.audit, "native", "")
	b.jeq(a.compatAudit, "compat", "")
	b.ret(unix.SECCOMP_RET_KILL_PROCESS) // an architecture it does not know
	b.label("compat")
	b.load(seccompDataNr)
	for _, nr := range a.compatDenied {
		b.jeq(nr, "deny", "")
	}
	b.ret(unix.SECCOMP_RET_ALLOW)
	b.label("native")
	b.load(seccompDataNr)
	if a.x32 {
		b.jge(x32SyscallBit, "deny", "")
	}
	b.jeq(a.socket, "family", "")
	b.jeq(a.socketpair, "family", "")
	b.jeq(a.ioURing, "deny", "")
	b.ret(unix.SECCOMP_RET_ALLOW)
	b.label("family")
	b.load(seccompDataArg0) // the family, an int: the low half
	b.jeq(unix.AF_UNIX, "allow", "deny")
	b.label("allow")
	b.ret(unix.SECCOMP_RET_ALLOW)
	b.label("deny")
	b.ret(deny)
	return b.program()
}

// denySockets installs the filter on the calling thread, which has
// no_new_privs set; the command it becomes keeps it.
func denySockets() error {
	prog, err := socketFilter()
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("install the seccomp filter: %w", errno)
	}
	return nil
}

// seccompAvailable reports why the filter cannot be installed here, or
// nil: the architecture has one, and the kernel has seccomp filters.
func seccompAvailable() error {
	if _, err := nativeArch(); err != nil {
		return err
	}
	// PR_GET_SECCOMP fails with EINVAL on a kernel without seccomp.
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		if errors.Is(err, unix.EINVAL) {
			return errors.New("this kernel has no seccomp (CONFIG_SECCOMP_FILTER)")
		}
		return fmt.Errorf("prctl(PR_GET_SECCOMP): %w", err)
	}
	return nil
}
