import { SANDBOX_USER } from './command-env.ts'
import { type CommandNetwork, networkArgv, networkEnv, networkMounts } from './sandbox-network.ts'
import type { SandboxLimits } from './sandbox-settings.ts'

/** What one command needs from a launch, sandboxed or not. */
export interface LaunchSpec {
  /** The program and its arguments, e.g. `['sh', '-c', cmd]`. */
  argv: string[]
  /** Real path of the workspace: the only writable path inside the sandbox. */
  workspace: string
  /** Real path of the working directory (inside the workspace). */
  cwd: string
  /** The complete environment of the command (already allow-listed). */
  env: Record<string, string>
  /** false: none; else the egress proxy (sandbox-network.ts). Unsandboxed: the host's, always. */
  network: false | CommandNetwork
}

/** How to spawn it: the file and arguments, the user, and data for extra pipes. */
export interface Launch {
  file: string
  args: string[]
  env: Record<string, string>
  /** Set when the runner runs as root: the spawned process drops to this user before exec. */
  uid?: number
  gid?: number
  /**
   * Written to extra pipes, in order: stdio 3, 4, … (bwrap reads /etc/passwd, /etc/group and the
   * seccomp filter from them, and closes each before the command starts).
   */
  inputs: (string | Uint8Array)[]
  /** A pipe after the inputs where bubblewrap writes its JSON status (the init's host pid). */
  statusFd?: number
  /**
   * Where the command sits below the spawned process: 0 unsandboxed; under bwrap its init
   * (depth 1) leads the sandbox's session and process group, and the command is its child (2).
   */
  groupDepth: number
  commandDepth: number
}

/** Facts found once by the probe that every bubblewrap launch uses. */
export interface BwrapHost {
  bwrap: string
  /** `[major, minor, patch]` of `bwrap --version`. */
  version: [number, number, number]
  /** Mounts of the system folders: `/usr` read-only, `/bin` etc. as the host has them. */
  systemMounts: string[]
  /** prlimit as seen inside the sandbox (the host's, under /usr). */
  prlimit: string
  /** User and group of commands inside (and outside) the sandbox. */
  uid: number
  gid: number
  /** Set when the runner is root and must drop to `uid`/`gid` before starting bwrap. */
  dropPrivileges: boolean
  readOnlyPaths: readonly string[]
  /** The seccomp filter (seccomp-filter.ts) for this architecture; none where there is no table. */
  seccompFilter?: Uint8Array
}

/** Host files under /etc a sandbox may read; only those that exist are mounted. */
export const ETC_FILES = [
  'alternatives',
  'ca-certificates',
  'ca-certificates.conf',
  'crypto-policies',
  'debian_version',
  'gai.conf',
  'host.conf',
  'hosts',
  'inputrc',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'localtime',
  'mime.types',
  'nsswitch.conf',
  'os-release',
  'pki',
  'profile',
  'protocols',
  'resolv.conf',
  'services',
  'ssl',
  'terminfo',
  'timezone',
]

const MIB = 1024 * 1024
/** The first extra pipe: /etc/passwd (3), /etc/group (4), then the seccomp filter (5). */
const FIRST_INPUT_FD = 3

/** `prlimit … --` in front of a command: the per-process limits. */
export function limitArgs(
  prlimit: string,
  limits: SandboxLimits,
  options: { processes: boolean },
): string[] {
  return [
    prlimit,
    `--as=${limits.memoryMb * MIB}`,
    // Soft limit: SIGXCPU (exit 152); the hard limit a second later: SIGKILL.
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    `--fsize=${limits.fileSizeMb * MIB}`,
    ...(options.processes ? [`--nproc=${limits.maxProcesses}`] : []),
    '--',
  ]
}

function atLeast(version: [number, number, number], major: number, minor: number): boolean {
  return version[0] > major || (version[0] === major && version[1] >= minor)
}

/** What a command may keep in memory-backed folders, MiB: ¾ of its memory in /tmp, ¼ in /dev/shm. */
export interface TmpfsSizes {
  tmpMb: number
  shmMb: number
}

/** The split of the memory limit between /tmp and /dev/shm (they sum to `memoryMb`). */
export function tmpfsSizes(limits: SandboxLimits): TmpfsSizes {
  const shmMb = Math.floor(limits.memoryMb / 4)
  return { tmpMb: limits.memoryMb - shmMb, shmMb }
}

/** bubblewrap sizes a tmpfs (`--size`, which applies to the next `--tmpfs` only) since 0.7. */
export function sizesTmpfs(version: [number, number, number]): boolean {
  return atLeast(version, 0, 7)
}

/**
 * The memory-backed folders, after `--dev /dev`: /dev/shm and /tmp each a tmpfs of its share of
 * the memory limit, and /dev itself (a tmpfs `--dev` cannot size) read-only, so together they
 * hold at most the limit. An older bubblewrap gets the same mounts, unsized.
 */
function tmpfsArgs(version: [number, number, number], limits: SandboxLimits): string[] {
  const sizes = sizesTmpfs(version) ? tmpfsSizes(limits) : undefined
  const size = (mb: number | undefined) => (mb === undefined ? [] : ['--size', String(mb * MIB)])
  return [
    ...size(sizes?.shmMb),
    '--tmpfs',
    '/dev/shm',
    '--remount-ro',
    '/dev',
    ...size(sizes?.tmpMb),
    '--tmpfs',
    '/tmp',
  ]
}

/** Host /dev/null bound read-only (so without its device: nodev) over each path: unopenable. */
function maskArgs(paths: string[]): string[] {
  return paths.flatMap((path) => ['--ro-bind', '/dev/null', path])
}

/** /etc/passwd and /etc/group inside: root, the sandbox user, and nothing of the host's. */
export function identityFiles(uid: number, gid: number, home: string): [string, string] {
  const passwd = [
    'root:x:0:0:root:/root:/usr/sbin/nologin',
    `${SANDBOX_USER}:x:${uid}:${gid}:Turnline sandbox:${home}:/bin/sh`,
    ...(uid === 65534 ? [] : ['nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin']),
  ]
  const group = [
    'root:x:0:',
    `${SANDBOX_USER}:x:${gid}:`,
    ...(gid === 65534 ? [] : ['nogroup:x:65534:']),
  ]
  return [`${passwd.join('\n')}\n`, `${group.join('\n')}\n`]
}

/**
 * The bubblewrap command line of one command: new user, PID, network, IPC, UTS and cgroup
 * namespaces (never the host's network: a command allowed one gets the egress proxy's relay);
 * a fresh root with the system folders read-only, its own /proc, /dev and /tmp, and the
 * workspace as the only writable host path; no capabilities, no further user namespaces, a new
 * terminal session; its status (the init's pid) on a pipe.
 */
export function bwrapLaunch(host: BwrapHost, limits: SandboxLimits, spec: LaunchSpec): Launch {
  const inputs: Launch['inputs'] = identityFiles(host.uid, host.gid, spec.workspace)
  const seccompFd = FIRST_INPUT_FD + inputs.length
  if (host.seccompFilter) inputs.push(host.seccompFilter)
  const statusFd = FIRST_INPUT_FD + inputs.length
  const args = ['--unshare-all', '--unshare-user']
  if (atLeast(host.version, 0, 8)) args.push('--disable-userns')
  if (host.seccompFilter) args.push('--seccomp', String(seccompFd))
  // Not --die-with-parent: it would end background processes as soon as the command exits
  // (bwrap's monitor returns then). The runner ends sandboxes itself, through the init's pid.
  args.push('--new-session', '--hostname', 'sandbox', '--json-status-fd', String(statusFd))
  args.push(...host.systemMounts)
  for (const name of ETC_FILES) args.push('--ro-bind-try', `/etc/${name}`, `/etc/${name}`)
  args.push('--ro-bind-data', '3', '/etc/passwd', '--ro-bind-data', '4', '/etc/group')
  for (const path of host.readOnlyPaths) args.push('--ro-bind', path, path)
  // The init (pid 1 inside) is bubblewrap's, outside the seccomp filter: its memory is out of
  // reach (ptrace attach and process_vm_writev are filtered; /proc/1/mem is masked here).
  args.push('--proc', '/proc', ...maskArgs(['/proc/1/mem', '/proc/1/task/1/mem']))
  args.push('--dev', '/dev', ...tmpfsArgs(host.version, limits))
  args.push('--dir', '/var', '--symlink', '../tmp', '/var/tmp')
  args.push(...networkMounts(spec.network))
  args.push('--bind', spec.workspace, spec.workspace, '--chdir', spec.cwd)
  const argv = networkArgv(spec.network, spec.argv)
  args.push('--', ...limitArgs(host.prlimit, limits, { processes: true }), ...argv)
  return {
    file: host.bwrap,
    args,
    env: { ...spec.env, ...networkEnv(spec.network) },
    ...(host.dropPrivileges ? { uid: host.uid, gid: host.gid } : {}),
    inputs,
    statusFd,
    groupDepth: 1,
    commandDepth: 2,
  }
}

/** Unsandboxed: the runner's user, its filesystem and network; only the limits apply. */
export function plainLaunch(
  prlimit: string | undefined,
  limits: SandboxLimits,
  spec: LaunchSpec,
): Launch {
  const [file, ...args] = [
    ...(prlimit ? limitArgs(prlimit, limits, { processes: false }) : []),
    ...spec.argv,
  ]
  return { file: file!, args, env: spec.env, inputs: [], groupDepth: 0, commandDepth: 0 }
}
