import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { measureWorkspaces } from './disk-usage.ts'
import type { ExecSession } from './exec-session.ts'
import { Refusal } from './refusal.ts'

const MIB = 1024 * 1024

/** The user a tenant's workspaces belong to (measured as that user), or the runner's own. */
export type WorkspaceUser = { uid: number; gid: number } | undefined

interface Usage {
  bytes: number
  /** Why the usage is unknown (counted as over the quota), or undefined. */
  unknown?: string
  at: number
}

interface Watched {
  user: WorkspaceUser
  sessions: Set<ExecSession>
  timer: NodeJS.Timeout
  measuring: boolean
}

/**
 * The disk quota of each tenant (TURNLINE_SANDBOX_TENANT_DISK_MB): the usage of all its
 * workspaces, measured (disk-usage.ts) at most once per check interval and counted up by the
 * runner's own writes in between, is checked before a command starts and before a file write;
 * while commands of the tenant run, it is measured every interval and, over the quota, they are
 * ended with a note. A filesystem quota, where the deployment has one, stops writes at once.
 */
export class DiskQuota {
  readonly #usage = new Map<string, Usage>()
  readonly #watched = new Map<string, Watched>()

  constructor(
    private readonly root: string,
    /** Undefined: no quota (project mode: the workspace is the user's own folder). */
    private readonly quotaMb: number | undefined,
    private readonly intervalMs: number,
    private readonly log: (entry: Record<string, unknown>) => void,
  ) {}

  /** Refuses (409) when the tenant is at or over its quota, or would be with `adding` bytes. */
  async check(tenant: string, user: WorkspaceUser, adding = 0): Promise<void> {
    if (this.quotaMb === undefined) return
    let usage = this.#usage.get(tenant)
    if (!usage || Date.now() - usage.at >= this.intervalMs)
      usage = await this.#measure(tenant, user)
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

  /** The tenant's workspaces changed (one was erased): measured afresh on the next check. */
  remeasure(tenant: string): void {
    const usage = this.#usage.get(tenant)
    if (usage) usage.at = 0
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
      const usage = await this.#measure(tenant, watched.user)
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
    if (usage.unknown) return `the workspaces' disk use cannot be measured: ${usage.unknown}`
    if (usage.bytes + adding <= max) return undefined
    const used = `${(usage.bytes / MIB).toFixed(1)} MiB`
    return adding > 0 && usage.bytes <= max
      ? `writing ${adding} bytes would take this tenant's workspaces (${used}) over ${setting}; delete files first`
      : `this tenant's workspaces use ${used}, over ${setting}; delete files to free space`
  }

  async #measure(tenant: string, user: WorkspaceUser): Promise<Usage> {
    const dir = path.join(this.root, tenant)
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
    const workspaces = entries.filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name))
    const measured = await measureWorkspaces(workspaces, user)
    const previous = this.#usage.get(tenant)
    let usage: Usage
    if (measured === undefined) {
      this.log({ event: 'disk_measure_failed', level: 'warn', tenant })
      usage = { bytes: previous?.bytes ?? 0, at: Date.now() }
    } else if (!measured.ok) {
      usage = { bytes: previous?.bytes ?? 0, unknown: measured.reason, at: Date.now() }
    } else {
      usage = { bytes: measured.bytes, at: Date.now() }
    }
    this.#usage.set(tenant, usage)
    return usage
  }
}
