import { describe, expect, it, vi } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import type { ObjectStore, PutOptions } from '../../src/ports/object-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { readKeysStore } from '../support/read-keys-store.ts'
import { threadStarted, turnEvents } from '../support/sample-events.ts'

/**
 * A commit that is due a checkpoint writes it beside its lines' append, and the manifest that
 * names it once it has its name (while the fs store fsyncs its folder); the commit settles only
 * once the checkpoint's put is done. A power loss in that window may keep the manifest and lose
 * the checkpoint's name: a reader then folds the log from the start, and the next commit writes
 * a checkpoint again.
 */
const ref = { tenant: 't1', workspace: 'w1', sessionId: 'session-1' }
const options = { checkpointEvery: 4, checkpointHistoryBatches: 12 }
const decode = (body: Uint8Array | undefined) => new TextDecoder().decode(body)
const said = (n: number): HistoryMessage[] => [
  { role: 'user', content: `task ${n}` },
  { role: 'assistant', content: `answer ${n}` },
]

async function commitTurn(sessions: SessionStore, n: number) {
  const events = turnEvents(n)
  return sessions.commit(await sessions.open(ref), { events, history: { append: said(n) } })
}

describe('a checkpoint written beside the commit’s other upkeep', () => {
  it('has the manifest written once it has its name, and the commit settle once it is written', async () => {
    const inner = new MemoryObjectStore()
    const order: string[] = []
    let finish: (() => void) | undefined
    // A store that names a checkpoint at once and makes it durable only when told (as the fs
    // store names it, then fsyncs its folder).
    const store: ObjectStore = {
      ...inner,
      get: (key) => inner.get(key),
      list: (prefix, o) => inner.list(prefix, o),
      delete: (key) => inner.delete(key),
      async put(key: string, body: Uint8Array, o: PutOptions = {}) {
        if (key.endsWith('manifest.json')) order.push('manifest put')
        const put = await inner.put(key, body, o)
        if (key.includes('/state/')) {
          order.push('checkpoint named')
          o.onNamed?.()
          await new Promise<void>((resolve) => {
            finish = resolve
          })
          order.push('checkpoint durable')
        }
        return put
      },
    }
    const sessions = new SessionStore({ ...options, store })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    for (let n = 1; n <= 2; n++) await commitTurn(sessions, n)
    order.length = 0
    let settled = false
    const committing = commitTurn(sessions, 3).then((result) => {
      settled = true
      order.push('commit settled')
      return result
    })
    await vi.waitFor(() => expect(order).toContain('manifest put'))
    expect(settled).toBe(false)
    finish?.()
    const result = await committing
    expect(result.maintenanceError).toBeUndefined()
    expect(order).toEqual([
      'checkpoint named',
      'manifest put',
      'checkpoint durable',
      'commit settled',
    ])
    const manifest = JSON.parse(decode((await inner.get(sessions.keys(ref).manifest))?.body))
    expect(manifest.checkpoint_batch).toBe(3)
  })

  it('folds the log from the start when the checkpoint the manifest names is gone, and writes one again', async () => {
    const store = new MemoryObjectStore()
    const sessions = new SessionStore({ ...options, store })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    for (let n = 1; n <= 29; n++) await commitTurn(sessions, n)
    const warm = await sessions.open(ref)
    const keys = sessions.keys(ref)
    const named = JSON.parse(decode((await store.get(keys.manifest))?.body))
    expect(named.checkpoint_batch).toBe(27)
    await store.delete(keys.checkpoint(27))

    const cold = new SessionStore({ ...options, store })
    const snapshot = await cold.open(ref)
    expect(snapshot.history).toEqual(warm.history)
    expect(snapshot.state).toEqual(warm.state)
    expect(snapshot.lastBatch).toBe(29)

    // The fold counts every batch since none was checkpointed: the next commit writes one, whole.
    const { maintenanceError } = await commitTurn(cold, 30)
    expect(maintenanceError).toBeUndefined()
    const after = JSON.parse(decode((await store.get(keys.manifest))?.body))
    expect(after.checkpoint_batch).toBe(30)
    // A cold reader reads that checkpoint and no batch before it again.
    const { store: reading, reads } = readKeysStore(store)
    const reader = new SessionStore({ ...options, store: reading })
    expect((await reader.open(ref)).history).toEqual((await cold.open(ref)).history)
    expect(reads.filter((k) => k.includes('/log/'))).toEqual([])
    expect(reads.filter((k) => k.includes('/state/')).map((k) => k.slice(-15, -5))).toEqual([
      '0000000030',
    ])
  })
})
