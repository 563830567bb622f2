import { execFile } from 'node:child_process'
import { lstat, readdir } from 'node:fs/promises'
import path from 'node:path'
import { COMMAND_PATH } from './command-env.ts'
import type { CommandSandbox } from './command-sandbox.ts'
import { CommandSlots } from './command-slots.ts'
import { DiskQuota } from './disk-quota.ts'
import type { ExecSession } from './exec-session.ts'
import type { PrivateSpoolIndex } from './private-spool-index.ts'
import { which } from './sandbox-probe.ts'
import type { TenantLimits as Limits } from './sandbox-settings.ts'
import { type CgroupStatus, TenantCgroups, tryJoin } from './tenant-cgroups.ts'
import { confineLaunch } from './tenant-launch.ts'
import { TenantUids } from './tenant-uids.ts'
import { checkWorkspaceName } from './workspace-paths.ts'

/** What holds each tenant to its limits here, as the runner reports it at start. */
export interface TenantLimitStatus {
  limits: Limits
  /** `per tenant <first>-<last>`, or the one uid every tenant's commands share. */
  uids: string
  processes: string
  memory: string
  disk: string
  /** Limits that cannot be enforced here, in words an operator can act on. */
  warnings: string[]
}

/**
 * The per-tenant limits of the runner (DESIGN.md §5, invariant 10; docs/configuration.md):
 * running commands, processes, memory and disk of each tenant, all its sessions together.
 */
export class TenantLimitEnforcer {
  readonly #sandboxes = new Map<string, Promise<CommandSandbox>>()
  /** Cgroup setups under way, by tenant: a request meanwhile joins the one under way. */
  readonly #ensuring = new Map<string, Promise<void>>()
  readonly #slots: CommandSlots
  readonly #disk: DiskQuota

  private constructor(
    private readonly root: string,
    private readonly sandbox: CommandSandbox,
    private readonly uids: TenantUids | undefined,
    private readonly cgroups: TenantCgroups | undefined,
    private readonly tools: { prlimit: string; setpriv: string },
    readonly status: TenantLimitStatus,
    log: (entry: Record<string, unknown>) => void,
    project: boolean,
    spools: PrivateSpoolIndex,
  ) {
    const limits = sandbox.settings.tenant
    this.#slots = new CommandSlots(limits.commands)
    const quota = project ? undefined : limits.diskMb
    const { diskCheckSeconds: every, diskWalkTimeoutMs: walkMs } = limits
    const spoolBytes = (tenant: string) => spools.bytes(tenant)
    this.#disk = new DiskQuota(root, quota, every * 1000, walkMs, log, spoolBytes)
  }

  /**
   * Finds out what can hold tenants here: their own uids, cgroups (v2, else v1), measuring. In
   * project mode (`project`: one user's own folder is every workspace) the disk is not measured
   * and the one uid is the folder owner's, not a shared tenant uid. `spools`: the runner's
   * private spools, counted in each tenant's disk use.
   */
  static async open(
    root: string,
    sandbox: CommandSandbox,
    log: (entry: Record<string, unknown>) => void,
    spools: PrivateSpoolIndex,
    project = false,
  ): Promise<TenantLimitEnforcer> {
    const settings = sandbox.settings
    const limits = settings.tenant
    const asRoot = process.getuid?.() === 0
    const prlimit = which('prlimit', COMMAND_PATH.split(':')) ?? 'prlimit'
    const setpriv = which('setpriv', COMMAND_PATH.split(':'))
    const warnings: string[] = []
    const range = settings.tenantUids
    const ownUids = asRoot && sandbox.sandboxed && range !== null
    const uids = ownUids ? new TenantUids(path.join(root, '.runner-state'), range) : undefined

    let cgroups: TenantCgroups | undefined
    let found: CgroupStatus = { pids: 'off', memory: 'off' }
    if (settings.cgroups === 'off') {
      found = { pids: 'TURNLINE_SANDBOX_CGROUPS=off', memory: 'TURNLINE_SANDBOX_CGROUPS=off' }
    } else if (!asRoot) {
      const why = 'the runner is not root: it cannot place commands in cgroups'
      found = { pids: why, memory: why }
    } else if (!setpriv && sandbox.sandboxed) {
      const why =
        'setpriv (util-linux) is missing: commands could not join a cgroup before dropping to their user'
      found = { pids: why, memory: why }
    } else {
      const opened = await TenantCgroups.open(limits)
      found = opened.status
      cgroups = opened.cgroups
      await cgroups?.ensure('.probe')
      const failed = cgroups && (await tryJoin(cgroups.procsFiles('.probe')))
      await cgroups?.forget('.probe')
      if (failed) {
        found = { pids: `cgroups: ${failed}`, memory: `cgroups: ${failed}` }
        cgroups = undefined
      }
    }

    const nproc = uids ? `RLIMIT_NPROC ${limits.processes} of the tenant's own uid` : undefined
    const pidsCgroup = cgroups?.has('pids')
      ? `cgroup pids.max ${limits.processes} (${found.pids})`
      : undefined
    const processes = [pidsCgroup, nproc].filter(Boolean).join('; ')
    if (!processes) {
      warnings.push(
        `a tenant's processes are not limited across its commands (only ${settings.limits.maxProcesses} per command, TURNLINE_SANDBOX_MAX_PROCESSES): ${found.pids}; ` +
          (asRoot
            ? 'set TURNLINE_SANDBOX_TENANT_UIDS or delegate a cgroup with the pids controller'
            : 'run the runner as root, or delegate a cgroup to it'),
      )
    }
    const memory = cgroups?.has('memory')
      ? `cgroup memory ${limits.memoryMb} MiB (${found.memory})`
      : ''
    if (!memory) {
      warnings.push(
        `a tenant's memory is not limited across its processes (only ${settings.limits.memoryMb} MiB of address space per process, TURNLINE_SANDBOX_MEMORY_MB): ${found.memory}`,
      )
    }
    const shared = sandbox.fileOwner?.uid ?? process.getuid?.() ?? -1
    if (!uids && sandbox.sandboxed && asRoot && !project) {
      warnings.push(
        `every tenant's commands run as uid ${shared} (TURNLINE_SANDBOX_TENANT_UIDS=off): tenants share one user's process count and file rights`,
      )
    }
    const status: TenantLimitStatus = {
      limits,
      uids: uids && range ? `per tenant ${range.first}-${range.last}` : `shared ${shared}`,
      processes: processes || 'per command only',
      memory: memory || 'per process only',
      disk: project
        ? "not limited: the workspace is the user's own folder (project mode)"
        : `${limits.diskMb} MiB per tenant, measured every ${limits.diskCheckSeconds} s while commands run`,
      warnings,
    }
    return new TenantLimitEnforcer(
      root,
      sandbox,
      uids,
      cgroups,
      { prlimit, setpriv: setpriv ?? 'setpriv' },
      status,
      log,
      project,
      spools,
    )
  }

  /**
   * The sandbox of a tenant: its own uid, its cgroups, its process limit around each launch.
   * Made once per tenant (a call while it is being made joins that), its cgroups made again
   * before each request (joining a setup under way).
   */
  async sandboxFor(tenant: string): Promise<CommandSandbox> {
    let made = this.#sandboxes.get(tenant)
    if (!made) {
      made = this.#make(tenant)
      this.#sandboxes.set(tenant, made)
      made.catch(() => this.#sandboxes.delete(tenant))
    }
    const sandbox = await made
    await this.#ensure(tenant)
    return sandbox
  }

  #ensure(tenant: string): Promise<void> | undefined {
    if (!this.cgroups) return undefined
    let under = this.#ensuring.get(tenant)
    if (!under) {
      under = this.cgroups.ensure(tenant).finally(() => this.#ensuring.delete(tenant))
      this.#ensuring.set(tenant, under)
    }
    return under
  }

  async #make(tenant: string): Promise<CommandSandbox> {
    const uid = await this.uids?.uidOf(tenant)
    if (uid !== undefined) await this.#handOver(tenant, uid)
    const cgroupProcs = this.cgroups?.procsFiles(tenant) ?? []
    const confinement = {
      cgroupProcs,
      ...(uid !== undefined ? { processes: this.sandbox.settings.tenant.processes } : {}),
      ...this.tools,
    }
    return this.sandbox.forTenant(uid, (launch) => confineLaunch(launch, confinement))
  }

  /**
   * Workspaces still owned by the shared sandbox uid (made before tenants had uids of their
   * own) are handed to the tenant's uid, once, before its first request in this runner's life.
   */
  async #handOver(tenant: string, uid: number): Promise<void> {
    const shared = this.sandbox.fileOwner
    if (!shared || shared.uid === uid) return
    // `<root>/<tenant>` is the runner's (no tenant writes there): lstat sees the real folders.
    const dir = path.join(this.root, tenant)
    for (const name of await readdir(dir).catch(() => [])) {
      const workspace = path.join(dir, name)
      const info = await lstat(workspace)
      if (info.isDirectory() && info.uid === shared.uid) {
        await handOver(workspace, shared, { uid, gid: uid })
      }
    }
  }

  /**
   * Sets tenants up ahead of their first request (a single-tenant server's `local`, once the
   * runner listens), so that it does not pay for their uid and cgroups: that request joins the
   * setup under way, or makes it itself when it failed (which is logged).
   */
  async prepare(tenants: string[], log: (entry: Record<string, unknown>) => void): Promise<void> {
    const one = async (tenant: string) => {
      try {
        checkWorkspaceName(tenant)
        await this.sandboxFor(tenant)
      } catch (error) {
        log({ event: 'tenant_prepare_failed', level: 'warn', tenant, error: String(error) })
      }
    }
    await Promise.all(tenants.map(one))
  }

  /** Admits a command: a running-commands slot (its release returned), and the disk quota. */
  async admitCommand(tenant: string, sandbox: CommandSandbox): Promise<() => void> {
    const release = this.#slots.take(tenant)
    try {
      await this.#disk.check(tenant, sandbox.fileOwner)
      return release
    } catch (error) {
      release()
      throw error
    }
  }

  /** Admits a file write of `bytes` against the disk quota. */
  admitWrite(tenant: string, sandbox: CommandSandbox, bytes: number): Promise<void> {
    return this.#disk.check(tenant, sandbox.fileOwner, bytes)
  }

  /** Measures the tenant's disk use while `session` runs (see DiskQuota). */
  watch(tenant: string, sandbox: CommandSandbox, session: ExecSession): void {
    this.#disk.watch(tenant, sandbox.fileOwner, session)
  }

  /** A workspace of the tenant was erased: its disk use is measured afresh. */
  remeasure(tenant: string): void {
    this.#disk.remeasure(tenant)
  }

  settled(tenant: string, session: ExecSession): void {
    this.#disk.unwatch(tenant, session)
  }

  async close(): Promise<void> {
    this.#disk.close()
    await this.cgroups?.close()
  }
}

/**
 * `chown` of what the shared uid owns in a workspace to the tenant's uid: GNU chown walks with
 * descriptors and never follows a symlink (-P, -h), and `--from` touches only the shared uid's
 * files. The workspace folder itself last: while it still belongs to the shared uid, a handover
 * that was cut short runs again.
 */
async function handOver(
  workspace: string,
  from: { uid: number; gid: number },
  to: { uid: number; gid: number },
): Promise<void> {
  const names = await readdir(workspace)
  const args = ['-R', '-P', '-h', `--from=${from.uid}:${from.gid}`, `${to.uid}:${to.gid}`, '--']
  for (let i = 0; i < names.length; i += 500) {
    const batch = names.slice(i, i + 500).map((name) => path.join(workspace, name))
    await chown([...args, ...batch])
  }
  await chown(['-h', `--from=${from.uid}:${from.gid}`, `${to.uid}:${to.gid}`, '--', workspace])
}

function chown(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('chown', args, { env: { PATH: COMMAND_PATH, LC_ALL: 'C' } }, (error, _o, stderr) =>
      error ? reject(new Error(`handing a workspace over failed: ${stderr.trim()}`)) : resolve(),
    )
  })
}
