import { lstat, readFile, unlink } from 'node:fs/promises'
import path from 'node:path'
import { type ExecRecord, parseExecRecord } from './exec-record.ts'
import { STATE_FOLDER } from './exec-state-folder.ts'
import { namesIn } from './private-spool-usage.ts'

/** A private spool's name: `write_stdin_<exec session id>.txt` (exec-registry.ts). */
const SPOOL_NAME = /^write_stdin_(run-[0-9a-f]+)\.txt$/
/** Passes run at most this far apart (as often as the grace when it is shorter). */
const MAX_INTERVAL_MS = 60_000

/** One command's private spool, by its workspace and exec session id. */
export interface SpoolOf {
  tenant: string
  session: string
  id: string
}

export interface PrivateSpoolSweepOptions {
  /** The workspaces' root (the state folder is `<root>/.runner-state`). */
  root: string
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
 * output. A pass runs when the runner starts and then every `min(grace, 60 s)`, and removes a
 * spool once its command has ended — its output no longer taken by this runner (a process it
 * left still holds it: kept until that ends) — longer than the grace ago. The engine reads a
 * hook's answer when the command ends (within a hook's longest timeout of its start), also across
 * a restart of the runner, so the grace outlasts that. Ended is when its record says it exited;
 * a command running when an earlier runner stopped (no exit recorded), or a spool without a
 * record (its start died), ended at its last output or at this runner's start, whichever is
 * later.
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

  /** One pass over every workspace's spools; a pass under way is joined. */
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
    const writing = this.options.writing()
    const state = path.join(this.options.root, STATE_FOLDER)
    for (const tenant of await namesIn(state)) {
      for (const session of await namesIn(path.join(state, tenant))) {
        const folder = path.join(state, tenant, session)
        for (const name of await namesIn(path.join(folder, 'spools'))) {
          const id = SPOOL_NAME.exec(name)?.[1]
          if (id === undefined || writing.has(`${tenant}/${session}/${id}`)) continue
          await this.#sweepOne(folder, name, { tenant, session, id })
        }
      }
    }
  }

  async #sweepOne(folder: string, name: string, spool: SpoolOf): Promise<void> {
    const file = path.join(folder, 'spools', name)
    const ended = await this.#endedAt(file, path.join(folder, 'exec', `${spool.id}.json`))
    if (ended === undefined || Date.now() - ended < this.options.graceMs) return
    try {
      await unlink(file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
      throw error
    }
    this.options.removed(spool)
  }

  /** When the spool's command ended (see the class); undefined when the spool is gone. */
  async #endedAt(spool: string, recordFile: string): Promise<number | undefined> {
    const stats = await lstat(spool).catch(() => undefined)
    if (!stats?.isFile()) return undefined
    const record = await readRecord(recordFile)
    if (record?.exited_at !== undefined) return record.exited_at
    return Math.max(stats.mtimeMs, this.#since)
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
