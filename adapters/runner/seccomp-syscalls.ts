/**
 * The system calls the command sandbox's seccomp filter denies (docs/configuration.md, "Command
 * sandbox"): what a build, a test run or a shell session never needs, and what would let a
 * command reach past its sandbox or the host's shared state. Numbers from the kernel's tables:
 * arch/x86/entry/syscalls/syscall_64.tbl (x86_64) and include/uapi/asm-generic/unistd.h
 * (aarch64); calls from 424 on have one number on every architecture.
 */

export type SeccompArch = 'x86_64' | 'aarch64'

export interface DeniedSyscall {
  name: string
  /** Its number on each architecture; absent where the architecture has no such call. */
  nr: Partial<Record<SeccompArch, number>>
  /** What the call returns: EPERM, or ENOSYS where programs fall back on "not implemented". */
  errno: 'EPERM' | 'ENOSYS'
  /** Denied only when argument `arg` (its low 32 bits) is one of `equals` or has a bit of `anyBit`. */
  only?: { arg: number; equals: readonly number[] } | { arg: number; anyBit: number }
}

const both = (x86_64: number, aarch64: number) => ({ x86_64, aarch64 })
const common = (nr: number) => both(nr, nr)

const PTRACE_ATTACH = 16
const PTRACE_SEIZE = 0x4206
/** CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET. */
const CLONE_NEW_NAMESPACES = 0x7e020000
/** CLONE_NEWTIME: unshare only (in clone's flags that bit is part of the exit signal). */
const CLONE_NEWTIME = 0x00000080

const eperm = (name: string, nr: DeniedSyscall['nr']): DeniedSyscall => ({
  name,
  nr,
  errno: 'EPERM',
})

export const DENIED_SYSCALLS: readonly DeniedSyscall[] = [
  // io_uring: a second system call interface that filters do not see into, and a large kernel
  // attack surface. ENOSYS: libuv, liburing, tokio… then use ordinary calls.
  { name: 'io_uring_setup', nr: common(425), errno: 'ENOSYS' },
  { name: 'io_uring_enter', nr: common(426), errno: 'ENOSYS' },
  { name: 'io_uring_register', nr: common(427), errno: 'ENOSYS' },
  // Kernel keyrings are not namespaced: every sandbox of one uid shares that uid's key quota.
  eperm('add_key', both(248, 217)),
  eperm('request_key', both(249, 218)),
  eperm('keyctl', both(250, 219)),
  // Attaching to a process that is not one's child (bubblewrap's init, pid 1 inside, runs
  // without this filter). PTRACE_TRACEME stays, so a debugger can trace what it starts.
  {
    name: 'ptrace',
    nr: both(101, 117),
    errno: 'EPERM',
    only: { arg: 0, equals: [PTRACE_ATTACH, PTRACE_SEIZE] },
  },
  eperm('process_vm_writev', both(311, 271)),
  eperm('pidfd_getfd', common(438)),
  // Kernel modules, kexec, reboot.
  eperm('init_module', both(175, 105)),
  eperm('finit_module', both(313, 273)),
  eperm('delete_module', both(176, 106)),
  eperm('kexec_load', both(246, 104)),
  eperm('kexec_file_load', both(320, 294)),
  eperm('reboot', both(169, 142)),
  // Mounts and roots.
  eperm('mount', both(165, 40)),
  eperm('umount2', both(166, 39)),
  eperm('pivot_root', both(155, 41)),
  eperm('chroot', both(161, 51)),
  eperm('open_tree', common(428)),
  eperm('move_mount', common(429)),
  eperm('fsopen', common(430)),
  eperm('fsconfig', common(431)),
  eperm('fsmount', common(432)),
  eperm('fspick', common(433)),
  eperm('mount_setattr', common(442)),
  eperm('open_tree_attr', common(467)),
  // New namespaces (bubblewrap already forbids nested user namespaces); clone3 passes its flags
  // in memory a filter cannot read, so it is ENOSYS and the C library falls back to clone.
  {
    name: 'unshare',
    nr: both(272, 97),
    errno: 'EPERM',
    only: { arg: 0, anyBit: CLONE_NEW_NAMESPACES | CLONE_NEWTIME },
  },
  {
    name: 'clone',
    nr: both(56, 220),
    errno: 'EPERM',
    only: { arg: 0, anyBit: CLONE_NEW_NAMESPACES },
  },
  { name: 'clone3', nr: common(435), errno: 'ENOSYS' },
  eperm('setns', both(308, 268)),
  // Kernel interfaces with a history of escapes, or that read host-wide state.
  eperm('bpf', both(321, 280)),
  eperm('perf_event_open', both(298, 241)),
  eperm('userfaultfd', both(323, 282)),
  eperm('open_by_handle_at', both(304, 265)),
  eperm('syslog', both(103, 116)),
  // The host's administration.
  eperm('swapon', both(167, 224)),
  eperm('swapoff', both(168, 225)),
  eperm('acct', both(163, 89)),
  eperm('quotactl', both(179, 60)),
  eperm('quotactl_fd', common(443)),
  eperm('clock_settime', both(227, 112)),
  eperm('settimeofday', both(164, 170)),
  eperm('iopl', { x86_64: 172 }),
  eperm('ioperm', { x86_64: 173 }),
]
