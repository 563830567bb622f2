import { TurnlineError } from '../contract/errors.ts'
import { parseSessionPointer, serializeSessionPointer } from '../contract/session-pointer.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { toBytes } from './json-bytes.ts'
import type { SessionRef } from './session-ref.ts'
import { assertSegment } from './session-ref.ts'

/**
 * Finds a session's workspace from its id (tenant-scoped pointer objects, create-only and
 * immutable, so lookups are cached for the life of the process). A session of another tenant
 * is simply not found.
 */
export class SessionLocator {
  private readonly cache = new Map<string, string>()

  constructor(
    private readonly store: ObjectStore,
    private readonly prefix: string,
    private readonly cacheSize = 4096,
  ) {}

  private key(tenant: string, sessionId: string): string {
    assertSegment('tenant', tenant)
    assertSegment('session_id', sessionId)
    const head = this.prefix.replace(/^\/+|\/+$/g, '')
    return `${head ? `${head}/` : ''}${tenant}/.turnline/sessions/${sessionId}.json`
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
    this.remember(`${ref.tenant}/${ref.sessionId}`, ref.workspace)
  }

  async locate(tenant: string, sessionId: string): Promise<SessionRef> {
    const key = this.key(tenant, sessionId)
    const cacheKey = `${tenant}/${sessionId}`
    const cached = this.cache.get(cacheKey)
    if (cached) return { tenant, workspace: cached, sessionId }
    const object = await this.store.get(key)
    if (!object) throw new TurnlineError('not_found', `session ${sessionId} not found`)
    const pointer = parseSessionPointer(object.body)
    assertSegment('workspace', pointer.workspace)
    this.remember(cacheKey, pointer.workspace)
    return { tenant, workspace: pointer.workspace, sessionId }
  }

  private remember(key: string, workspace: string): void {
    if (this.cache.size >= this.cacheSize) this.cache.clear()
    this.cache.set(key, workspace)
  }
}
