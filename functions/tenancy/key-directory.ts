import { TurnlineError } from '../../src/contract/errors.ts'
import type { TenantLimits } from '../../src/contract/tenancy.ts'
import type { Clock } from '../../src/ports/clock.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { hashDigest, type KeyLookup, sameDigest } from '../http/auth.ts'
import { readKeyRegistry, usableRegistryKeys } from './key-registry.ts'

/** Default of `firstReadWaitMs`. */
const FIRST_READ_WAIT_MS = 10_000

export interface KeyDirectoryOptions {
  store: ObjectStore
  /** The registry is re-read when the copy in memory is older than this (revocation delay). */
  reloadMs: number
  /** An unknown key triggers a re-read at most this often (unknown keys cannot hammer the store). */
  missReloadMs: number
  clock?: Clock
  /** How long a request waits for the first read before it fails 503 (default 10 s). */
  firstReadWaitMs?: number
  /** Called with the registry's tenants before its keys are accepted (tool signing secrets). */
  onTenants?: (tenants: readonly string[]) => Promise<void>
  log?: (entry: Record<string, unknown>) => void
}

interface Snapshot {
  entries: { digest: Uint8Array; tenant: string }[]
  limits: Map<string, TenantLimits>
  etag: string | null
  revision: number
}

/**
 * The key registry as the server sees it: a copy in memory, re-read from the store when it is
 * older than `reloadMs` (so a revoked key stops working within that time, with no restart) and
 * when a request presents a key the copy does not know (at most once per `missReloadMs`, so a
 * key just added works at once). Re-reads are single-flight and cost one GET (the body is
 * parsed only when its etag changed). A failed re-read keeps the last good copy (logged) and is
 * tried again after `missReloadMs`. Until the first read has ended there is no copy to answer
 * from: a request waits for it, at most `firstReadWaitMs`, then fails 503 (retryable) while the
 * read goes on — never 401, since its key may be in the registry; a first read that fails
 * fails the request with its error (503, or 500 for a corrupt registry).
 * Presented keys are compared as SHA-256 digests against every entry, without early exit. An
 * entry whose tenant name is reserved (`reservedTenantName`: written by hand or by an older
 * release) is never loaded, and every load that finds one logs it as an error.
 */
export class KeyDirectory implements KeyLookup {
  readonly #options: KeyDirectoryOptions
  readonly #clock: Clock
  #snapshot: Snapshot | undefined
  #checkedAt = Number.NEGATIVE_INFINITY
  #loading: Promise<void> | undefined

  constructor(options: KeyDirectoryOptions) {
    this.#options = options
    this.#clock = options.clock ?? systemClock
  }

  async tenantOf(digest: Uint8Array): Promise<string | undefined> {
    if (this.#snapshot === undefined) await this.#firstRead()
    else if (this.#age() >= this.#options.reloadMs) await this.#reload()
    let tenant = this.#match(digest)
    if (tenant === undefined && this.#age() >= this.#options.missReloadMs) {
      await this.#reload()
      tenant = this.#match(digest)
    }
    return tenant
  }

  /** The tenant's limits in the registry (overrides of the deployment defaults). */
  limitsFor(tenant: string): TenantLimits | undefined {
    return this.#snapshot?.limits.get(tenant)
  }

  /** Revision of the copy in memory (-1 before the first read; 0 when there is no registry). */
  get revision(): number {
    return this.#snapshot?.revision ?? -1
  }

  /** Re-reads now (startup, tests). */
  reload(): Promise<void> {
    return this.#reload()
  }

  /** The first read, waited for at most `firstReadWaitMs`. */
  async #firstRead(): Promise<void> {
    const waitMs = this.#options.firstReadWaitMs ?? FIRST_READ_WAIT_MS
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), waitMs)
    })
    try {
      const outcome = await Promise.race([this.#reload(), late])
      if (outcome === 'late') {
        throw new TurnlineError(
          'storage_unavailable',
          'the key registry has not been read yet (the server is starting); retry',
          { retryable: true, retryAfter: 1 },
        )
      }
    } finally {
      clearTimeout(timer)
    }
  }

  #age(): number {
    return this.#clock.now() - this.#checkedAt
  }

  #match(digest: Uint8Array): string | undefined {
    let tenant: string | undefined
    for (const entry of this.#snapshot?.entries ?? []) {
      if (sameDigest(entry.digest, digest)) tenant ??= entry.tenant
    }
    return tenant
  }

  #reload(): Promise<void> {
    this.#loading ??= this.#load().finally(() => {
      this.#loading = undefined
    })
    return this.#loading
  }

  async #load(): Promise<void> {
    try {
      const readAt = this.#clock.now()
      const loaded = await readKeyRegistry(this.#options.store)
      // The copy's age counts from the read, but only once the copy is in place: a request
      // arriving meanwhile must not take a fresh age for a copy it cannot see yet.
      if (loaded === null) {
        this.#snapshot = { entries: [], limits: new Map(), etag: null, revision: 0 }
        this.#checkedAt = readAt
        return
      }
      if (loaded.etag === this.#snapshot?.etag) {
        this.#checkedAt = readAt
        return
      }
      const { registry } = loaded
      const { usable, refused } = usableRegistryKeys(registry)
      for (const entry of refused) {
        this.#options.log?.({
          level: 'error',
          msg: 'key registry entry refused: its tenant name is reserved; revoke it',
          hash: entry.key.hash,
          tenant: entry.key.tenant,
          error: entry.problem,
        })
      }
      await this.#options.onTenants?.([...new Set(usable.map((k) => k.tenant))])
      this.#snapshot = {
        entries: usable.map((k) => ({ digest: hashDigest(k.hash), tenant: k.tenant })),
        limits: new Map(Object.entries(registry.tenants).map(([name, t]) => [name, t.limits])),
        etag: loaded.etag,
        revision: registry.revision,
      }
      this.#checkedAt = readAt
      this.#options.log?.({
        level: 'info',
        msg: 'key registry loaded',
        revision: registry.revision,
        keys: usable.length,
        ...(refused.length > 0 ? { refused: refused.length } : {}),
      })
    } catch (error) {
      if (this.#snapshot === undefined) throw error
      // Keep serving the last good copy; try again after missReloadMs.
      this.#checkedAt =
        this.#clock.now() - this.#options.reloadMs + Math.min(this.#options.missReloadMs, 1000)
      this.#options.log?.({
        level: 'error',
        msg: 'key registry reload failed; serving the last good copy',
        revision: this.#snapshot.revision,
        error: error instanceof Error ? error.message : String(error),
      })
    }
  }
}
