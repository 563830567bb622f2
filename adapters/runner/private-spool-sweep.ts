import { readFile } from 'node:fs/promises'
import { type ExecRecord, parseExecRecord } from './exec-record.ts'
import { ExecStateFolder } from './exec-state-folder.ts'
import { inBatches, type PrivateSpoolIndex, type SpoolOf } from './private-spool-index.ts'
import { removeSwept } from './swept-commands.ts'

/** Passes run at most this far apart (as often as the grace when it is shorter). */
const MAX_INTERVAL_MS = 60_000

export interface PrivateSpoolSweepOptions {
  /** The workspaces' root (the state folder is `<root>/.runner-state`). */
  root: string
  /** The private spools there are (private-spool-index.ts). */
  index: PrivateSpoolIndex
  /** How long after its command ended a spool is kept (TURNLINE_SANDBOX_PRIVATE_SPOOL_GRACE_SECONDS). */
  graceMs: number
  /** `<tenant>/<session>/<id>` of the commands whose output this runner still takes. */
  writing: () => ReadonlySet<string>
  /** A spool was removed. */
  removed: (spool: SpoolOf) => void
  log: (entry: Record<string, unknown>) => void
}

/**
 * Removes the private spools whose answer no one reads any more: `/v1/exec/close` removes a
 * command's (exec-state-folder.ts), but a server that stopped between a hook's start and its
 * close never sends one, and the engine does not close a hook that left a process holding its
 * output. A pass runs when the runner starts and then every `min(grace, 60 s)` over the spools
 * there are (private-spool-index.ts: its first pass waits for the walk that finds them; 32 side
 * by side), and
 * removes a spool once its command has ended — its output no longer taken by this runner (a
 * process it left still holds it: kept until that ends) — longer than the grace ago, with the
 * command's claim and record (swept-commands.ts). The engine reads a hook's answer when the
 * command ends (within a hook's longest timeout of its start), also across a restart of the
 * runner, so the grace outlasts that. Ended is when its record says it exited, or its last
 * output when a process it left still wrote then (`spool_complete: false`); a command running
 * when an earlier runner stopped (no exit recorded), or a spool without a record (its start
 * died), ended at its last output or at this runner's start, whichever is later.
 */
export class PrivateSpoolSweep {
  readonly #since = Date.now()
  #timer: NodeJS.Timeout | undefined
  #pass: Promise<void> | undefined

  constructor(private readonly options: PrivateSpoolSweepOptions) {}

  start(): void {
    void this.sweep()
    const every = Math.min(this.options.graceMs, MAX_INTERVAL_MS)
    this.#timer = setInterval(() => void this.sweep(), every)
    this.#timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer)
    await this.#pass
  }

  /** One pass over the private spools; a pass under way is joined. */
  sweep(): Promise<void> {
    this.#pass ??= this.#sweepAll()
      .catch((error: unknown) =>
        this.options.log({ event: 'spool_sweep_failed', level: 'warn', error: String(error) }),
      )
      .finally(() => {
        this.#pass = undefined
      })
    return this.#pass
  }

  async #sweepAll(): Promise<void> {
    const { index } = this.options
    await index.ready()
    const writing = this.options.writing()
    const ended = index.all().filter((s) => !writing.has(`${s.tenant}/${s.session}/${s.id}`))
    await inBatches(ended, (spool) =>
      this.#sweepOne(spool).catch((error: unknown) => {
        const { tenant, session, id } = spool
        const where = { tenant, session_id: session, exec_session_id: id }
        this.options.log({
          event: 'spool_sweep_failed',
          level: 'warn',
          ...where,
          error: String(error),
        })
      }),
    )
  }

  async #sweepOne(spool: SpoolOf): Promise<void> {
    const { index, root } = this.options
    const stats = await index.stat(spool)
    if (!stats?.isFile()) return
    const state = new ExecStateFolder(root, spool.tenant, spool.session)
    const record = await readRecord(state.recordFile(spool.id))
    if (Date.now() - this.#endedAt(record, stats.mtimeMs) < this.options.graceMs) return
    await removeSwept(state, spool.id, record)
    index.drop(spool)
    this.options.removed(spool)
  }

  /** When the spool's command ended (see the class). */
  #endedAt(record: ExecRecord | undefined, lastOutput: number): number {
    const exited = record?.exited_at
    if (exited === undefined) return Math.max(lastOutput, this.#since)
    return record?.spool_complete === false ? Math.max(exited, lastOutput) : exited
  }
}

async function readRecord(file: string): Promise<ExecRecord | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined)
  if (text === undefined) return undefined
  try {
    return parseExecRecord(text)
  } catch {
    return undefined
  }
}
