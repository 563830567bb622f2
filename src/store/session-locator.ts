import { TurnlineError } from '../contract/errors.ts'
import { parseSessionPointer, serializeSessionPointer } from '../contract/session-pointer.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { toBytes } from './json-bytes.ts'
import { LocationCache } from './location-cache.ts'
import type { SessionRef } from './session-ref.ts'
import { assertSegment, sessionPointerKey } from './session-ref.ts'

/**
 * Finds a session's workspace from its id (tenant-scoped pointer objects, create-only and
 * immutable, so lookups are cached: location-cache.ts; the service shares the session store's
 * cache, which its reads evict). A session of another tenant is simply not found.
 */
export class SessionLocator {
  constructor(
    private readonly store: ObjectStore,
    private readonly prefix: string,
    private readonly cache = new LocationCache(),
  ) {}

  private key(tenant: string, sessionId: string): string {
    return sessionPointerKey(this.prefix, tenant, sessionId)
  }

  async register(ref: SessionRef, createdAt: string): Promise<void> {
    assertSegment('workspace', ref.workspace)
    const pointer = {
      format: 'turnline.session-pointer' as const,
      version: 1 as const,
      session_id: ref.sessionId,
      workspace: ref.workspace,
      created_at: createdAt,
    }
    await this.store.put(
      this.key(ref.tenant, ref.sessionId),
      toBytes(serializeSessionPointer(pointer)),
      {
        ifNoneMatch: '*',
        contentType: 'application/json',
      },
    )
    this.cache.set(ref.tenant, ref.sessionId, ref.workspace)
  }

  async locate(tenant: string, sessionId: string): Promise<SessionRef> {
    const cached = this.cache.get(tenant, sessionId)
    if (cached) return { tenant, workspace: cached, sessionId }
    const object = await this.store.get(this.key(tenant, sessionId))
    if (!object) throw new TurnlineError('not_found', `session ${sessionId} not found`)
    const pointer = parseSessionPointer(object.body)
    assertSegment('workspace', pointer.workspace)
    this.cache.set(tenant, sessionId, pointer.workspace)
    return { tenant, workspace: pointer.workspace, sessionId }
  }

  /** Drops cached pointers of sessions this process deleted (retention). */
  forget(tenant: string, sessionIds: readonly string[]): void {
    for (const id of sessionIds) this.cache.delete(tenant, id)
  }
}
