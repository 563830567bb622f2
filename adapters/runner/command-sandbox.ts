import { type ChildProcess, spawn } from 'node:child_process'
import { chmod, chown, lstat } from 'node:fs/promises'
import { constants } from 'node:os'
import path from 'node:path'
import { Refusal } from './refusal.ts'
import {
  type BwrapHost,
  bwrapLaunch,
  type Launch,
  type LaunchSpec,
  plainLaunch,
  type TmpfsSizes,
} from './sandbox-launch.ts'
import type { NetworkPolicy, SandboxLimits, SandboxSettings } from './sandbox-settings.ts'
import type { SeccompArch } from './seccomp-syscalls.ts'
import type { Owner } from './workspace-walk.ts'

/** What the runner found at start (probed once) and reports: on stdout, /healthz, to its host. */
export type SandboxStatus =
  | {
      isolation: 'bwrap'
      bwrap: string
      version: string
      /** The user commands run as (never 0). */
      uid: number
      gid: number
      network: NetworkPolicy
      limits: SandboxLimits
      /** What /tmp and /dev/shm may hold; null when this bubblewrap cannot size them (< 0.7). */
      tmpfs: TmpfsSizes | null
      /** The architecture of the seccomp filter in force; null when commands run without one. */
      seccomp: SeccompArch | null
      /** Where this sandbox is weaker than documented, in words for the operator (said at start). */
      warnings: string[]
    }
  | {
      isolation: 'none'
      /** Why commands are not sandboxed. */
      reason: string
      /** The runner's own user, which commands run as. */
      uid: number
      /** Per-process limits through prlimit, or null when prlimit is missing. */
      limits: SandboxLimits | null
    }

export interface RunResult {
  code: number
  stdout: string
  stderr: string
  timedOut: boolean
}

const RUN_OUTPUT_LIMIT = 64 * 1024

/**
 * How the runner starts commands: inside bubblewrap when the probe found it working, otherwise
 * as the runner's own user. Either way with the allow-listed environment and the limits.
 */
export class CommandSandbox {
  constructor(
    readonly settings: SandboxSettings,
    readonly status: SandboxStatus,
    private readonly host: BwrapHost | undefined,
    private readonly prlimit: string | undefined,
    /** Wraps every launch (a tenant's limits, tenant-launch.ts). */
    private readonly confine?: (launch: Launch) => Launch,
  ) {}

  /**
   * The same sandbox for one tenant: its commands run as `uid` (and gid), when given and the
   * runner drops privileges, and every launch goes through `confine`.
   */
  forTenant(uid: number | undefined, confine: (launch: Launch) => Launch): CommandSandbox {
    const host =
      this.host?.dropPrivileges && uid !== undefined ? { ...this.host, uid, gid: uid } : this.host
    return new CommandSandbox(this.settings, this.status, host, this.prlimit, confine)
  }

  get sandboxed(): boolean {
    return this.host !== undefined
  }

  /**
   * Whether a command could see a host folder above `path` (the workspace): always when it runs
   * unsandboxed, else when a read-only mount holds `path` — then git in the workspace could find
   * a repository there.
   */
  seesAbove(path: string): boolean {
    if (!this.host) return true
    const mounts = this.host.systemMounts.flatMap((arg, i, all) =>
      arg === '--ro-bind' ? [all[i + 2] ?? '/'] : [],
    )
    return [...mounts, ...this.host.readOnlyPaths].some(
      (mount) => path === mount || path.startsWith(`${mount.replace(/\/+$/, '')}/`),
    )
  }

  /** Milliseconds a command may run before the runner ends it. */
  get timeLimitMs(): number {
    return this.settings.limits.timeLimitSeconds * 1000
  }

  /** Whether a command gets the network: the runner's policy, then the session's wish. */
  network(requested: boolean | undefined): boolean {
    const policy = this.settings.network
    if (requested && policy === 'off') {
      throw new Refusal(
        'invalid_input',
        'the session allows network access, but this runner gives commands none ' +
          '(TURNLINE_SANDBOX_NETWORK=off); ask the operator, or create the session without ' +
          'sandbox.network',
      )
    }
    return policy === 'on' || (policy === 'session' && requested === true)
  }

  launch(spec: LaunchSpec): Launch {
    const launch = this.host
      ? bwrapLaunch(this.host, this.settings.limits, spec)
      : plainLaunch(this.prlimit, this.settings.limits, spec)
    return this.confine ? this.confine(launch) : launch
  }

  /**
   * Who owns what the runner creates in a workspace (files, folders, spools): the sandbox user,
   * when the runner runs as root and drops to it; otherwise nobody is handed anything.
   */
  get fileOwner(): Owner | undefined {
    const host = this.host
    return host?.dropPrivileges ? { uid: host.uid, gid: host.gid } : undefined
  }

  /**
   * The probe's scratch folder (made by the runner a moment before, holding nothing of a
   * tenant's): the sandbox user's own, reachable on the way. Workspaces are prepared through
   * descriptors instead (workspace-root.ts).
   */
  async prepareWorkspace(root: string, dir: string): Promise<void> {
    if (!this.host?.dropPrivileges) return
    for (let parent = path.dirname(dir); parent.startsWith(root); parent = path.dirname(parent)) {
      const info = await lstat(parent)
      if ((info.mode & 0o001) === 0) await chmod(parent, (info.mode & 0o7777) | 0o111)
      if (parent === root) break
    }
    const info = await lstat(dir)
    if (info.uid !== this.host.uid) await chown(dir, this.host.uid, this.host.gid)
    if ((info.mode & 0o777) !== 0o700) await chmod(dir, 0o700)
  }

  /** Runs a helper (git for worktrees, the probe) to its end, in the sandbox like any command. */
  run(spec: LaunchSpec, timeoutMs: number, stdin = ''): Promise<RunResult> {
    // Sandboxed, bubblewrap changes into `spec.cwd` itself, inside its own mounts.
    return runLaunch(this.launch(spec), this.sandboxed ? '/' : spec.cwd, timeoutMs, stdin)
  }
}

/** Spawns a launch with its pipes, in its own process group. */
export function spawnLaunch(launch: Launch, cwd: string) {
  const child = spawn(launch.file, launch.args, {
    cwd,
    env: launch.env,
    detached: true,
    stdio: [
      'pipe',
      'pipe',
      'pipe',
      ...launch.inputs.map(() => 'pipe' as const),
      ...(launch.statusFd === undefined ? [] : ['pipe' as const]),
    ],
    ...(launch.uid !== undefined ? { uid: launch.uid } : {}),
    ...(launch.gid !== undefined ? { gid: launch.gid } : {}),
  })
  launch.inputs.forEach((data, index) => {
    const pipe = child.stdio[3 + index]
    if (pipe && 'end' in pipe) {
      pipe.on('error', () => {})
      pipe.end(data)
    }
  })
  return child
}

/** Calls `found` with the host pid of the sandbox's init once bubblewrap reports it. */
export function watchSandboxInit(
  child: ChildProcess,
  launch: Launch,
  found: (pid: number) => void,
): void {
  const status = launch.statusFd === undefined ? undefined : child.stdio[launch.statusFd]
  let said = ''
  status?.on('data', (chunk: Buffer) => {
    if (said.length > 4096) return
    said += chunk.toString('utf8')
    const init = /"child-pid":\s*(\d+)/.exec(said)
    if (init) found(Number(init[1]))
  })
  status?.on('error', () => {})
}

function runLaunch(
  launch: Launch,
  cwd: string,
  timeoutMs: number,
  stdin: string,
): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawnLaunch(launch, cwd)
    let init: number | undefined
    watchSandboxInit(child, launch, (pid) => {
      init = pid
    })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    const keep = (text: string, chunk: Buffer) =>
      text.length < RUN_OUTPUT_LIMIT ? text + chunk.toString('utf8') : text
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout = keep(stdout, chunk)
    })
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = keep(stderr, chunk)
    })
    child.stdin?.on('error', () => {})
    child.stdin?.end(stdin)
    const timer = setTimeout(() => {
      timedOut = true
      // The spawned group, and the sandbox's init: SIGKILL to it ends its whole PID namespace.
      const targets = [
        ...(child.pid !== undefined ? [-child.pid] : []),
        ...(init !== undefined ? [init] : []),
      ]
      for (const target of targets) {
        try {
          process.kill(target, 'SIGKILL')
        } catch {
          // gone already
        }
      }
    }, timeoutMs)
    child.once('error', (error) => {
      clearTimeout(timer)
      resolve({ code: 127, stdout, stderr: `${stderr}${error.message}\n`, timedOut })
    })
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      resolve({
        code: code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0),
        stdout,
        stderr,
        timedOut,
      })
    })
  })
}
