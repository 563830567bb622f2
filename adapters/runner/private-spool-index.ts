import { lstat, readdir } from 'node:fs/promises'
import path from 'node:path'
import { STATE_FOLDER } from './exec-state-folder.ts'

/** One command's private spool, by its workspace and exec session id. */
export interface SpoolOf {
  tenant: string
  session: string
  id: string
}

/** A private spool's name: `write_stdin_<exec session id>.txt` (exec-registry.ts). */
const SPOOL_NAME = /^write_stdin_(run-[0-9a-f]+)\.txt$/
/** Folders read, or spools looked at, side by side. */
const AT_ONCE = 32

/**
 * The private spools on disk (`.runner-state/<tenant>/<session>/spools/`), by tenant, so that
 * counting a tenant's (disk-quota.ts) and sweeping them (private-spool-sweep.ts) look at the
 * spools there are, not at every session's folder. Found once by a walk of every session's
 * folder (`ready`: at the runner's start, so a restart finds every spool an earlier runner left;
 * a walk that failed is walked again at the next call), then kept by the runner: a spool is
 * added once created and dropped once removed (close, sweep). An entry whose file is gone (its
 * workspace was erased, or the walk found it just before a close removed it) is dropped when
 * it is next looked at.
 */
export class PrivateSpoolIndex {
  readonly #byTenant = new Map<string, Map<string, SpoolOf>>()
  #walked: Promise<void> | undefined

  constructor(private readonly root: string) {}

  /** Resolves once every spool on disk at the start is indexed. */
  ready(): Promise<void> {
    this.#walked ??= this.#walk().catch((error: unknown) => {
      this.#walked = undefined
      throw error
    })
    return this.#walked
  }

  /** `.runner-state/<tenant>/<session>/spools/<name>` of a spool. */
  file(spool: SpoolOf): string {
    const { tenant, session, id } = spool
    return path.join(this.root, STATE_FOLDER, tenant, session, 'spools', `write_stdin_${id}.txt`)
  }

  add(spool: SpoolOf): void {
    const spools = this.#byTenant.get(spool.tenant) ?? new Map<string, SpoolOf>()
    this.#byTenant.set(spool.tenant, spools)
    spools.set(`${spool.session}/${spool.id}`, spool)
  }

  drop(spool: SpoolOf): void {
    const spools = this.#byTenant.get(spool.tenant)
    spools?.delete(`${spool.session}/${spool.id}`)
    if (spools?.size === 0) this.#byTenant.delete(spool.tenant)
  }

  /** Every indexed spool (after `ready`). */
  all(): SpoolOf[] {
    return [...this.#byTenant.values()].flatMap((spools) => [...spools.values()])
  }

  /**
   * Bytes on disk of a tenant's private spools, counted in its disk use with its workspaces. The
   * folder is the runner's own, reached by no command, so the runner measures it itself, as
   * `du` counts: the blocks allocated.
   */
  async bytes(tenant: string): Promise<number> {
    await this.ready()
    const spools = [...(this.#byTenant.get(tenant)?.values() ?? [])]
    let bytes = 0
    await inBatches(spools, async (spool) => {
      const stats = await this.stat(spool)
      if (stats?.isFile()) bytes += stats.blocks * 512
    })
    return bytes
  }

  /** The spool's file status; undefined (and dropped) once it is gone. */
  async stat(spool: SpoolOf) {
    try {
      return await lstat(this.file(spool))
    } catch (error) {
      if (!gone(error)) throw error
      this.drop(spool)
      return undefined
    }
  }

  async #walk(): Promise<void> {
    const state = path.join(this.root, STATE_FOLDER)
    for (const tenant of await namesIn(state)) {
      const sessions = await namesIn(path.join(state, tenant))
      await inBatches(sessions, async (session) => {
        for (const name of await namesIn(path.join(state, tenant, session, 'spools'))) {
          const id = SPOOL_NAME.exec(name)?.[1]
          if (id !== undefined) this.add({ tenant, session, id })
        }
      })
    }
  }
}

/** The names in a folder; none when it is gone or is no folder (any other failure throws). */
async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir)
  } catch (error) {
    if (gone(error)) return []
    throw error
  }
}

function gone(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code
  return code === 'ENOENT' || code === 'ENOTDIR'
}

/** `each` of the items, AT_ONCE side by side. */
export async function inBatches<T>(items: readonly T[], each: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += AT_ONCE) {
    await Promise.all(items.slice(i, i + AT_ONCE).map(each))
  }
}
