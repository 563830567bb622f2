import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { type Measurement, measureWorkspaces } from './disk-usage.ts'
import { type Usage, usageAfter } from './disk-usage-verdict.ts'
import type { ExecSession } from './exec-session.ts'
import { Refusal } from './refusal.ts'

const MIB = 1024 * 1024

/** The user a tenant's workspaces belong to (measured as that user), or the runner's own. */
export type WorkspaceUser = { uid: number; gid: number } | undefined

interface Watched {
  user: WorkspaceUser
  sessions: Set<ExecSession>
  timer: NodeJS.Timeout
  measuring: boolean
}

/**
 * The disk quota of each tenant (TURNLINE_SANDBOX_TENANT_DISK_MB): the usage of all its
 * workspaces and of its private spools (the output of its command hooks, counted by
 * private-spool-index.ts),
 * measured (disk-usage.ts) at most once per check interval and counted up by the runner's own
 * writes in between, is checked before a command starts and before a file write;
 * while commands of the tenant run, it is measured every interval and, over the quota, they are
 * ended with a note. A usage that cannot be measured counts as over the quota (see
 * disk-usage-verdict.ts); erasing a workspace (deleting its session) is the way out. A
 * filesystem quota, where the deployment has one, stops writes at once.
 */
export class DiskQuota {
  readonly #usage = new Map<string, Usage>()
  readonly #watched = new Map<string, Watched>()
  /** The walk of each tenant's workspaces under way: checks meanwhile wait for it. */
  readonly #walks = new Map<string, Promise<Usage>>()

  constructor(
    private readonly root: string,
    /** Undefined: no quota (project mode: the workspace is the user's own folder). */
    private readonly quotaMb: number | undefined,
    private readonly intervalMs: number,
    /** The longest one walk of a tenant's workspaces may take (disk-usage.ts). */
    private readonly walkTimeoutMs: number,
    private readonly log: (entry: Record<string, unknown>) => void,
    /** Bytes of the tenant's private spools (PrivateSpoolIndex.bytes). */
    private readonly spools: (tenant: string) => Promise<number>,
    private readonly measure: typeof measureWorkspaces = measureWorkspaces,
  ) {}

  /** Refuses (409) when the tenant is at or over its quota, or would be with `adding` bytes. */
  async check(tenant: string, user: WorkspaceUser, adding = 0): Promise<void> {
    if (this.quotaMb === undefined) return
    let usage = this.#usage.get(tenant)
    if (!usage || Date.now() - usage.at >= this.intervalMs) usage = await this.#walk(tenant, user)
    const problem = this.#problem(usage, adding)
    if (problem) {
      throw new Refusal('conflict', problem, {
        limit: 'TURNLINE_SANDBOX_TENANT_DISK_MB',
        used_bytes: usage.bytes,
        max_bytes: this.quotaMb * MIB,
      })
    }
    usage.bytes += adding
  }

  /** Measures while `session` runs; over the quota, every running command of the tenant ends. */
  watch(tenant: string, user: WorkspaceUser, session: ExecSession): void {
    if (this.quotaMb === undefined) return
    let watched = this.#watched.get(tenant)
    if (!watched) {
      const timer = setInterval(() => void this.#tick(tenant), this.intervalMs)
      timer.unref()
      watched = { user, sessions: new Set(), timer, measuring: false }
      this.#watched.set(tenant, watched)
    }
    watched.sessions.add(session)
  }

  /**
   * The tenant's workspaces changed (one was erased, a command ended): measured afresh on the
   * next check, by a walk that starts after this (a walk under way is no longer waited for, and
   * what it finds is not kept).
   */
  remeasure(tenant: string): void {
    const usage = this.#usage.get(tenant)
    if (usage) usage.at = 0
    this.#walks.delete(tenant)
  }

  /** `session` has ended: no more measuring for it, and what it wrote is measured next time. */
  unwatch(tenant: string, session: ExecSession): void {
    this.remeasure(tenant)
    const watched = this.#watched.get(tenant)
    if (!watched) return
    watched.sessions.delete(session)
    if (watched.sessions.size === 0) {
      clearInterval(watched.timer)
      this.#watched.delete(tenant)
    }
  }

  close(): void {
    for (const watched of this.#watched.values()) clearInterval(watched.timer)
    this.#watched.clear()
  }

  async #tick(tenant: string): Promise<void> {
    const watched = this.#watched.get(tenant)
    if (!watched || watched.measuring) return
    watched.measuring = true
    try {
      const usage = await this.#walk(tenant, watched.user)
      const problem = this.#problem(usage, 0)
      if (!problem) return
      this.log({ event: 'disk_quota_exceeded', level: 'warn', tenant, used_bytes: usage.bytes })
      const note = `\n[runner] stopped: ${problem}\n`
      await Promise.all([...watched.sessions].map((s) => s.kill(note)))
    } finally {
      watched.measuring = false
    }
  }

  #problem(usage: Usage, adding: number): string | undefined {
    if (this.quotaMb === undefined) return undefined
    const max = this.quotaMb * MIB
    const setting = `its disk quota of ${this.quotaMb} MiB (TURNLINE_SANDBOX_TENANT_DISK_MB)`
    if (usage.unknown) {
      return `the workspaces' disk use cannot be measured: ${usage.unknown}; no command starts and no file is written until it can: delete a session to erase its workspace and free its files`
    }
    if (usage.bytes + adding <= max) return undefined
    const used = `${(usage.bytes / MIB).toFixed(1)} MiB`
    return adding > 0 && usage.bytes <= max
      ? `writing ${adding} bytes would take this tenant's workspaces (${used}) over ${setting}; delete files first`
      : `this tenant's workspaces use ${used}, over ${setting}; delete files to free space`
  }

  /**
   * One walk of the tenant's workspaces at a time: a check while one is under way waits for it,
   * so a tenant's requests cannot start walks side by side (each may take `walkTimeoutMs`).
   */
  #walk(tenant: string, user: WorkspaceUser): Promise<Usage> {
    const running = this.#walks.get(tenant)
    if (running) return running
    const walk = this.#measureOnce(tenant, user, () => this.#walks.get(tenant) === walk)
    this.#walks.set(tenant, walk)
    const done = () => {
      if (this.#walks.get(tenant) === walk) this.#walks.delete(tenant)
    }
    walk.then(done, done)
    return walk
  }

  async #measureOnce(tenant: string, user: WorkspaceUser, current: () => boolean): Promise<Usage> {
    const dir = path.join(this.root, tenant)
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
    const workspaces = entries.filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name))
    const startedAt = Date.now()
    const [walked, spools] = await Promise.all([
      this.measure(workspaces, user, this.walkTimeoutMs),
      this.spools(tenant).catch((error: unknown) => String(error)),
    ])
    const measured: Measurement =
      typeof spools === 'string'
        ? { kind: 'failed', reason: `its private spools could not be counted: ${spools}` }
        : walked.kind === 'bytes'
          ? { ...walked, bytes: walked.bytes + spools }
          : walked
    const usage = usageAfter(this.#usage.get(tenant), measured, startedAt, Date.now())
    // A walk from before `remeasure` answers its own waiters only.
    if (!current()) return usage
    if (measured.kind === 'failed') {
      const counted = usage.unknown ? 'over the quota' : 'the last figure'
      this.log({
        event: 'disk_measure_failed',
        level: 'warn',
        tenant,
        reason: measured.reason,
        counted,
      })
    }
    this.#usage.set(tenant, usage)
    return usage
  }
}
