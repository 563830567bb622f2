import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'

/** GET /v1/workspaces from the store: a tenant's workspace folders and their session counts. */
describe('workspace listing', () => {
  it("lists a tenant's workspaces in name order with their session counts, and no other tenant's", async () => {
    const objects = new MemoryObjectStore()
    const sessions = new SessionStore({ store: objects })
    const made: [string, string, string][] = [
      ['t', 'web', 's1'],
      ['t', 'api', 's2'],
      ['t', 'web', 's3'],
      ['other', 'secret', 's4'],
    ]
    for (const [tenant, workspace, id] of made) {
      await sessions.create({ tenant, workspace, sessionId: id }, id, {
        events: [{ type: 'thread.started', thread_id: id }],
        state: {},
      })
    }
    // An artifact-only workspace, and the tenant's own pointer folder (not a workspace).
    await objects.put('t/notes/.vtcode/artifacts/notes.md', new Uint8Array([1]))
    expect(await sessions.workspaces('t')).toEqual([
      { workspace: 'api', sessions: 1 },
      { workspace: 'notes', sessions: 0 },
      { workspace: 'web', sessions: 2 },
    ])
    expect(await sessions.workspaces('nobody')).toEqual([])
  })
})
