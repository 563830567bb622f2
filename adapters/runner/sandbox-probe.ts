import { execFile } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { lstat, readFile, readlink, realpath, rm } from 'node:fs/promises'
import path from 'node:path'
import { COMMAND_PATH, commandEnv } from './command-env.ts'
import { CommandSandbox, type SandboxStatus } from './command-sandbox.ts'
import { freshFolderOfThisProcess } from './process-tree.ts'
import { type BwrapHost, sizesTmpfs, tmpfsSizes } from './sandbox-launch.ts'
import type { SandboxSettings } from './sandbox-settings.ts'
import { seccompArch, seccompFilter } from './seccomp-filter.ts'

const PROBE_TIMEOUT_MS = 20_000
const SYSTEM_LINKS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']

/** No working sandbox while one is required (TURNLINE_SANDBOX=require, or a multi-tenant host). */
export class SandboxUnavailable extends Error {
  override readonly name = 'SandboxUnavailable'
  constructor(readonly reason: string) {
    super(`no working command sandbox: ${reason}`)
  }
}

/**
 * The first executable `name` in `dirs` (default: the runner's PATH, then the standard one).
 * Synchronous: it is asked only while the runner starts, before it serves anything, and a few
 * access(2) calls on the main thread cost microseconds where each one sent through libuv's
 * thread pool waited behind the start's other file work (6–8 ms for the relay's three programs).
 */
export function which(
  name: string,
  dirs = [...(process.env.PATH ?? '').split(':'), ...COMMAND_PATH.split(':')],
): string | undefined {
  for (const dir of dirs.filter((d) => d.startsWith('/'))) {
    const candidate = path.join(dir, name)
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // Not here, or not executable: the next folder.
    }
  }
  return undefined
}

function bwrapVersion(bwrap: string): Promise<[number, number, number] | undefined> {
  return new Promise((resolve) => {
    execFile(bwrap, ['--version'], { timeout: 5000, env: { PATH: COMMAND_PATH } }, (e, out) => {
      const match = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(out)
      resolve(e || !match ? undefined : [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)])
    })
  })
}

/** `/usr` read-only; `/bin`, `/lib`… as links where the host merged them into /usr, else binds. */
async function systemMounts(): Promise<string[]> {
  const mounts = ['--ro-bind', '/usr', '/usr']
  for (const dir of SYSTEM_LINKS) {
    const info = await lstat(dir).catch(() => undefined)
    if (info?.isSymbolicLink()) mounts.push('--symlink', await readlink(dir), dir)
    else if (info?.isDirectory()) mounts.push('--ro-bind', dir, dir)
  }
  return mounts
}

/** What most often breaks bubblewrap, told in words an operator can act on. */
function hint(stderr: string, root: string, uid: number): string {
  if (
    /setting up uid map|No permission to create|creating new namespace|Operation not permitted/i.test(
      stderr,
    )
  ) {
    return (
      ' — unprivileged user namespaces look disabled: check sysctl kernel.unprivileged_userns_clone=1, ' +
      'user.max_user_namespaces > 0, and on Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0 ' +
      '(or an AppArmor profile for bwrap); in a container, allow user namespaces (e.g. a seccomp ' +
      'profile that permits unshare/clone with CLONE_NEWUSER)'
    )
  }
  if (/Can't find source path|Permission denied/i.test(stderr)) {
    return (
      ` — the sandbox user (uid ${uid}) must be able to reach ${root}: let it through each ` +
      'parent folder (chmod o+x, or setfacl -m u:<uid>:x) or move the runner root ' +
      '(TURNLINE_DATA_DIR, --root)'
    ).replace('<uid>', String(uid))
  }
  return ''
}

function unsandboxed(
  settings: SandboxSettings,
  reason: string,
  prlimit: string | undefined,
): CommandSandbox {
  const status: SandboxStatus = {
    isolation: 'none',
    reason,
    uid: process.getuid?.() ?? -1,
    limits: prlimit ? settings.limits : null,
  }
  return new CommandSandbox(settings, status, undefined, prlimit)
}

/**
 * Finds out once, at start, whether commands can run in bubblewrap here: looks for bwrap and
 * prlimit, then runs a real sandboxed command in a scratch workspace under `root` with the very
 * options every command gets. `require` turns a failure into an error; `auto` into an unsandboxed
 * runner whose status says why. `probing` is handed the sandbox as it will be if that command
 * works, as the command starts, so that a caller can probe more with it meanwhile; this resolves
 * to that very object when the command works, and never otherwise.
 */
export async function openSandbox(
  settings: SandboxSettings,
  root: string,
  probing?: (candidate: CommandSandbox) => void,
): Promise<CommandSandbox> {
  // In the system folders, which every sandbox mounts.
  const prlimit = which('prlimit', COMMAND_PATH.split(':'))
  const fail = (reason: string): CommandSandbox => {
    if (settings.mode === 'require') throw new SandboxUnavailable(reason)
    return unsandboxed(settings, reason, prlimit)
  }
  if (settings.mode === 'off') return unsandboxed(settings, 'TURNLINE_SANDBOX=off', prlimit)
  if (process.platform !== 'linux')
    return fail(`bubblewrap needs Linux (this is ${process.platform})`)
  const bwrap = which('bwrap')
  if (!bwrap) {
    return fail(
      'bubblewrap is not installed (no bwrap on PATH; Debian/Ubuntu: apt-get install bubblewrap)',
    )
  }
  if (!prlimit) return fail('prlimit (util-linux) is not installed; it applies the resource limits')
  const version = await bwrapVersion(bwrap)
  if (!version) return fail(`${bwrap} --version did not answer`)
  for (const extra of settings.readOnlyPaths) {
    if (!(await lstat(extra).catch(() => undefined))) {
      throw new Error(`TURNLINE_SANDBOX_READ_ONLY: ${extra} does not exist`)
    }
  }
  const runnerUid = process.getuid?.() ?? -1
  const runnerGid = process.getgid?.() ?? -1
  const asRoot = runnerUid === 0
  const arch = seccompArch()
  let host: BwrapHost = {
    bwrap,
    version,
    systemMounts: await systemMounts(),
    prlimit,
    uid: asRoot ? settings.uid : runnerUid,
    gid: asRoot ? settings.gid : runnerGid,
    dropPrivileges: asRoot,
    readOnlyPaths: settings.readOnlyPaths,
    ...(arch ? { seccompFilter: seccompFilter(arch) } : {}),
  }
  if (host.uid === 0) {
    return fail(
      'commands would run as uid 0; run the runner as root (it drops to TURNLINE_SANDBOX_UID) or as an unprivileged user',
    )
  }
  const warnings: string[] = []
  if (!sizesTmpfs(version)) {
    warnings.push(
      `bubblewrap ${version.join('.')} cannot size a tmpfs (0.7 can): what a command keeps in /tmp ` +
        'and /dev/shm is bounded by host memory only, not TURNLINE_SANDBOX_MEMORY_MB; upgrade bubblewrap',
    )
  }
  if (!arch) warnings.push(`${NO_FILTER} there is no system call table for ${process.arch} here`)

  const workspace = await freshFolderOfThisProcess(root, '.sandbox-probe')
  const real = await realpath(workspace)
  const sandboxOf = (host: BwrapHost) =>
    new CommandSandbox(settings, bwrapStatus(settings, host, warnings), host, prlimit)
  const probed = host
  const candidate = sandboxOf(host)
  await candidate.prepareWorkspace(root, real)
  try {
    probing?.(candidate)
    let failure = await probe(candidate, host, real)
    if (failure && host.seccompFilter && /seccomp/i.test(failure)) {
      // A kernel (or a container's policy) without seccomp filters: sandboxed without one.
      warnings.push(`${NO_FILTER} the kernel refused it (${failure})`)
      const { seccompFilter: _refused, ...without } = host
      host = without
      failure = await probe(sandboxOf(host), host, real)
    }
    if (failure) return fail(`${failure}${hint(failure, root, host.uid)}`)
  } finally {
    await rm(workspace, { recursive: true, force: true })
  }
  return host === probed ? candidate : sandboxOf(host)
}

const NO_FILTER =
  'commands run WITHOUT a seccomp filter — every system call the kernel allows an unprivileged ' +
  "user (io_uring, keyrings, ptrace of the sandbox's init…):"

function bwrapStatus(
  settings: SandboxSettings,
  host: BwrapHost,
  warnings: string[],
): SandboxStatus {
  return {
    isolation: 'bwrap',
    bwrap: host.bwrap,
    version: host.version.join('.'),
    uid: host.uid,
    gid: host.gid,
    network: settings.network,
    limits: settings.limits,
    tmpfs: sizesTmpfs(host.version) ? tmpfsSizes(settings.limits) : null,
    seccomp: host.seccompFilter ? (seccompArch() ?? null) : null,
    warnings,
  }
}

/**
 * The probe's command: prints the user it runs as (`id -u`), writes a file in the workspace and
 * reads it back, then prints its seccomp lines (`grep ^Seccomp /proc/self/status`) — with the
 * shell's builtins alone, so that the probe is one process in the sandbox (prlimit, then this
 * `sh`) rather than four: the shell reads its own /proc/self/status, whose `Uid:` line holds the
 * real, effective, saved and filesystem uids (`id -u` prints the effective one) and whose seccomp
 * lines are those of any process it would start.
 */
const PROBE_SCRIPT = [
  'while read -r key real effective _; do [ "$key" = Uid: ] && echo "$effective" && break; done < /proc/self/status',
  'echo ok > probe.txt && read -r line < probe.txt && echo "$line"',
  'while read -r key value; do case $key in',
  '  Seccomp:) echo "$key $value" ;;',
  '  Seccomp_filters:) echo "$key $value"; break ;;',
  'esac; done < /proc/self/status',
].join('\n')

/**
 * Runs one real command with the options every command gets; says what went wrong, if anything.
 * With a seccomp filter, the command's /proc/self/status must show it: one filter more than the
 * runner's own (which a container may have given it).
 */
async function probe(
  sandbox: CommandSandbox,
  host: BwrapHost,
  workspace: string,
): Promise<string | undefined> {
  const result = await sandbox.run(
    {
      argv: ['sh', '-c', PROBE_SCRIPT],
      workspace,
      cwd: workspace,
      env: commandEnv({ workspace, cwd: workspace, tty: false, passEnv: [], source: {} }),
      network: false,
    },
    PROBE_TIMEOUT_MS,
  )
  const expected = `${host.uid}\nok\n`
  if (result.code !== 0 || !result.stdout.startsWith(expected)) {
    const said = (result.stderr || result.stdout).trim().slice(0, 500)
    const why = result.timedOut ? `timed out after ${PROBE_TIMEOUT_MS} ms` : `exit ${result.code}`
    return `bubblewrap does not work here (${why}: ${said || 'no output'})`
  }
  if (!host.seccompFilter) return undefined
  const inside = result.stdout.slice(expected.length)
  const own = await readFile('/proc/self/status', 'utf8').catch(() => '')
  const field = (text: string, name: string) => {
    const found = new RegExp(`^${name}:\\s*(\\d+)`, 'm').exec(text)?.[1]
    return found === undefined ? undefined : Number(found)
  }
  const filters = field(inside, 'Seccomp_filters')
  const ownFilters = field(own, 'Seccomp_filters')
  if (
    field(inside, 'Seccomp') === 2 &&
    (filters === undefined || ownFilters === undefined || filters === ownFilters + 1)
  )
    return undefined
  return `the seccomp filter is not in force in the sandbox (${inside.trim().replace(/\s+/g, ' ') || 'no Seccomp line'})`
}
