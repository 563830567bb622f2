import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import { listAll } from '../../src/store/list-all.ts'
import { gate } from '../support/gate.ts'
import { startScriptedEngine } from '../support/scripted-engine.ts'

/**
 * `DELETE /v1/workspaces/:workspace` on the real engine (memory adapters): every session of the
 * workspace and its durable artifacts go, another workspace and another tenant keep theirs, a
 * running turn leaves its session (409) until a later call finishes.
 */
const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'answered',
    (error: unknown) => (isTurnlineError(error) ? error.code : String(error)),
  )

async function twoWorkspaces() {
  const memory = new MemoryObjectStore()
  const engine = startScriptedEngine({ store: memory })
  const { service } = engine
  const ids: string[] = []
  for (const workspace of ['doomed', 'doomed', 'kept']) {
    const { session_id: id } = await service.createSession('t1', { workspace })
    engine.model.enqueue({ text: `answer in ${workspace}` })
    await service.stepTurn('t1', id, { input: 'hello' })
    ids.push(id)
  }
  await service.putArtifact('t1', 'doomed', { kind: 'progress', update: { goal: 'gone' } })
  await service.putArtifact('t1', 'kept', { kind: 'progress', update: { goal: 'stays' } })
  const keys = async (part: string) =>
    (await listAll(memory, '')).objects.map(({ key }) => key).filter((key) => key.includes(part))
  return { engine, service, ids, keys }
}

describe('deleting a workspace', () => {
  it('erases its sessions and artifacts, and nothing of another workspace or tenant', async () => {
    const { service, ids, keys } = await twoWorkspaces()
    const [a, b, other] = ids as [string, string, string]
    const keptBefore = await keys('/kept/')
    expect(await codeOf(service.deleteWorkspace('t2', 'doomed'))).toBe('not_found')

    await service.deleteWorkspace('t1', 'doomed')

    for (const id of [a, b]) {
      expect(await codeOf(service.getSession('t1', id))).toBe('not_found')
    }
    // What is left of it: the two sessions' deleted-session markers, nothing else.
    const left = await keys('/doomed/')
    expect(left).toHaveLength(2)
    for (const key of left) expect(key).toMatch(/\/\.vtcode\/sessions\/[^/]+\/log\/\d{10}\.json$/)
    const listed = await service.listSessions('t1', {
      workspace: 'doomed',
      limit: 50,
      order: 'newest',
    })
    expect(listed.sessions).toEqual([])
    expect(await keys('/kept/')).toEqual(keptBefore)
    expect((await service.getSession('t1', other)).session_id).toBe(other)
  })

  it('leaves a session whose turn runs (409) and finishes on the next call', async () => {
    const { engine, service, ids } = await twoWorkspaces()
    const [a, b] = ids as [string, string]
    const hold = gate()
    engine.model.enqueue({ text: 'slow', hold: hold.promise })
    const running = service.stepTurn('t1', a, { input: 'take your time' })
    await engine.model.requested(4)
    expect(await codeOf(service.deleteWorkspace('t1', 'doomed'))).toBe('session_busy')
    expect(await codeOf(service.getSession('t1', b))).toBe('not_found')
    hold.open()
    await running
    await service.deleteWorkspace('t1', 'doomed')
    expect(await codeOf(service.getSession('t1', a))).toBe('not_found')
  })
})
