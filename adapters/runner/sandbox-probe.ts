import { execFile } from 'node:child_process'
import { constants } from 'node:fs'
import { access, lstat, mkdir, readlink, realpath, rm } from 'node:fs/promises'
import path from 'node:path'
import { COMMAND_PATH, commandEnv } from './command-env.ts'
import { CommandSandbox, type SandboxStatus } from './command-sandbox.ts'
import { type BwrapHost, sizesTmpfs, tmpfsSizes } from './sandbox-launch.ts'
import type { SandboxSettings } from './sandbox-settings.ts'

const PROBE_TIMEOUT_MS = 20_000
const SYSTEM_LINKS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']

/** No working sandbox while one is required (TURNLINE_SANDBOX=require, or a multi-tenant host). */
export class SandboxUnavailable extends Error {
  override readonly name = 'SandboxUnavailable'
  constructor(readonly reason: string) {
    super(`no working command sandbox: ${reason}`)
  }
}

/** The first executable `name` in `dirs` (default: the runner's PATH, then the standard one). */
export async function which(
  name: string,
  dirs = [...(process.env.PATH ?? '').split(':'), ...COMMAND_PATH.split(':')],
): Promise<string | undefined> {
  for (const dir of dirs.filter((d) => d.startsWith('/'))) {
    const candidate = path.join(dir, name)
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate
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
 * runner whose status says why.
 */
export async function openSandbox(
  settings: SandboxSettings,
  root: string,
): Promise<CommandSandbox> {
  // In the system folders, which every sandbox mounts.
  const prlimit = await which('prlimit', COMMAND_PATH.split(':'))
  const fail = (reason: string): CommandSandbox => {
    if (settings.mode === 'require') throw new SandboxUnavailable(reason)
    return unsandboxed(settings, reason, prlimit)
  }
  if (settings.mode === 'off') return unsandboxed(settings, 'TURNLINE_SANDBOX=off', prlimit)
  if (process.platform !== 'linux')
    return fail(`bubblewrap needs Linux (this is ${process.platform})`)
  const bwrap = await which('bwrap')
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
  const host: BwrapHost = {
    bwrap,
    version,
    systemMounts: await systemMounts(),
    prlimit,
    uid: asRoot ? settings.uid : runnerUid,
    gid: asRoot ? settings.gid : runnerGid,
    dropPrivileges: asRoot,
    readOnlyPaths: settings.readOnlyPaths,
  }
  const warnings: string[] = []
  if (!sizesTmpfs(version)) {
    warnings.push(
      `bubblewrap ${version.join('.')} cannot size a tmpfs (0.7 can): what a command keeps in /tmp ` +
        'and /dev/shm is bounded by host memory only, not TURNLINE_SANDBOX_MEMORY_MB; upgrade bubblewrap',
    )
  }
  const status: SandboxStatus = {
    isolation: 'bwrap',
    bwrap,
    version: version.join('.'),
    uid: host.uid,
    gid: host.gid,
    network: settings.network,
    limits: settings.limits,
    tmpfs: sizesTmpfs(version) ? tmpfsSizes(settings.limits) : null,
    warnings,
  }
  if (host.uid === 0) {
    return fail(
      'commands would run as uid 0; run the runner as root (it drops to TURNLINE_SANDBOX_UID) or as an unprivileged user',
    )
  }
  const sandbox = new CommandSandbox(settings, status, host, prlimit)

  const workspace = path.join(root, '.sandbox-probe')
  await rm(workspace, { recursive: true, force: true })
  await mkdir(workspace, { recursive: true })
  const real = await realpath(workspace)
  await sandbox.prepareWorkspace(root, real)
  try {
    const result = await sandbox.run(
      {
        argv: ['sh', '-c', 'id -u; echo ok > probe.txt && cat probe.txt'],
        workspace: real,
        cwd: real,
        env: commandEnv({ workspace: real, cwd: real, tty: false, passEnv: [], source: {} }),
        network: false,
      },
      PROBE_TIMEOUT_MS,
    )
    const expected = `${host.uid}\nok\n`
    if (result.code !== 0 || result.stdout !== expected) {
      const said = (result.stderr || result.stdout).trim().slice(0, 500)
      const why = result.timedOut ? `timed out after ${PROBE_TIMEOUT_MS} ms` : `exit ${result.code}`
      return fail(
        `bubblewrap does not work here (${why}: ${said || 'no output'})${hint(said, root, host.uid)}`,
      )
    }
  } finally {
    await rm(workspace, { recursive: true, force: true })
  }
  return sandbox
}
