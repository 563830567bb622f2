import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { SessionLocator } from '../../src/store/session-locator.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { startScriptedEngine } from '../support/scripted-engine.ts'

/** GET /v1/workspaces from the store: a tenant's workspace folders and their session counts. */
describe('workspace listing', () => {
  it("lists a tenant's workspaces in name order with their session counts, and no other tenant's", async () => {
    const objects = new MemoryObjectStore()
    const sessions = new SessionStore({ store: objects })
    const locator = new SessionLocator(objects, '')
    const made: [string, string, string][] = [
      ['t', 'web', 's1'],
      ['t', 'api', 's2'],
      ['t', 'web', 's3'],
      ['other', 'secret', 's4'],
    ]
    for (const [tenant, workspace, id] of made) {
      // As the engine creates a session: its id pointer first, then its folder.
      await locator.register({ tenant, workspace, sessionId: id }, '2026-12-05T00:00:00Z')
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

  it('counts no deleted session, and lists no workspace left with only their markers', async () => {
    const engine = startScriptedEngine()
    const { service } = engine
    const ids: string[] = []
    for (const workspace of ['web', 'web', 'gone']) {
      ids.push((await service.createSession('t1', { workspace })).session_id)
    }
    await service.putArtifact('t1', 'notes', { kind: 'progress', update: { goal: 'stays' } })
    expect((await service.listWorkspaces('t1')).workspaces).toEqual([
      { workspace: 'gone', sessions: 1 },
      { workspace: 'notes', sessions: 0 },
      { workspace: 'web', sessions: 2 },
    ])
    await service.deleteSession('t1', ids[0] as string)
    await service.deleteSession('t1', ids[2] as string)
    expect((await service.listWorkspaces('t1')).workspaces).toEqual([
      { workspace: 'notes', sessions: 0 },
      { workspace: 'web', sessions: 1 },
    ])
    await service.deleteWorkspace('t1', 'web')
    expect((await service.listWorkspaces('t1')).workspaces).toEqual([
      { workspace: 'notes', sessions: 0 },
    ])
  })
})
