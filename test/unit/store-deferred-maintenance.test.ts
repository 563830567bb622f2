import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { gate as opened, settledSoon } from '../support/gate.ts'
import { threadStarted, turnEvents } from '../support/sample-events.ts'
import { expectFilesMatch } from '../support/session-files.ts'

/**
 * `deferMaintenance` on a store that appends (the filesystem's shape): a turn's end returns once
 * its batch is written and its lines appended to events.jsonl, with its checkpoint and manifest
 * left running; the next commit and `manifest()` wait for them, the next commit starts from the
 * snapshot they left (no checkpoint written twice), and the files match the log all along.
 */
const ref = { tenant: 't1', workspace: 'w1', sessionId: 'session-1' }

/** A memory store whose checkpoint and manifest writes wait while held; every write logged. */
function gated(inner: MemoryObjectStore) {
  const writes: string[] = []
  let gate: Promise<void> | undefined
  const name = (key: string) => key.split('/').slice(-2).join('/')
  const store: ObjectStore = {
    get: (key) => inner.get(key),
    list: (prefix, options) => inner.list(prefix, options),
    delete: (key) => inner.delete(key),
    put: async (key, body, options) => {
      const held = key.includes('/state/') || key.endsWith('/manifest.json')
      if (gate !== undefined && held) await gate
      writes.push(`put ${name(key)}`)
      return inner.put(key, body, options)
    },
    append: async (key, bytes, options) => {
      writes.push(`append ${name(key)}`)
      return inner.append!(key, bytes, options)
    },
  }
  return {
    store,
    writes,
    hold() {
      const { promise, open } = opened()
      gate = promise
      return () => {
        gate = undefined
        open()
      }
    },
  }
}

const TURN_END = { overlapManifest: true }

describe('a turn end whose maintenance is left running', () => {
  it('returns before it; the next commit and manifest() wait for it', async () => {
    const inner = new MemoryObjectStore()
    const { store, writes, hold } = gated(inner)
    const sessions = new SessionStore({ store, checkpointEvery: 2, deferMaintenance: true })
    const committed: ThreadEvent[] = [threadStarted('thread-1')]
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    let snapshot = await sessions.open(ref)
    for (let turn = 1; turn <= 4; turn++) {
      const release = hold()
      const events = turnEvents(turn)
      const done = sessions.commit(snapshot, { events }, TURN_END)
      // Returns while its checkpoint and manifest wait (were they awaited, it never would).
      const { maintenanceError, manifestWritten, batch } = await done
      expect(maintenanceError).toBeUndefined()
      expect(manifestWritten).toBeUndefined()
      expect(writes).not.toContain(`put state/${String(batch).padStart(10, '0')}.json`)
      committed.push(...events)
      await expectFilesMatch(inner, ref.sessionId, committed)
      snapshot = (await done).snapshot
      // Batches 1 and 3 checkpoint (every second batch): manifest() waits for their maintenance.
      const manifest = sessions.manifest(ref)
      if (turn % 2 === 1) expect(await settledSoon(manifest)).toBe(false)
      release()
      expect((await manifest).last_seq).toBe(committed.length - 1)
      await expectFilesMatch(inner, ref.sessionId, committed)
    }
    // A checkpoint every second batch, each written once.
    const checkpoints = writes.filter((w) => w.startsWith('put state/'))
    expect(checkpoints).toEqual(['put state/0000000001.json', 'put state/0000000003.json'])
  })

  it('the next commit writes its batch only after it', async () => {
    const inner = new MemoryObjectStore()
    const { store, writes, hold } = gated(inner)
    const sessions = new SessionStore({ store, checkpointEvery: 1, deferMaintenance: true })
    const committed: ThreadEvent[] = [threadStarted('thread-1')]
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    const release = hold()
    const one = await sessions.commit(await sessions.open(ref), { events: turnEvents(1) }, TURN_END)
    committed.push(...turnEvents(1))
    writes.length = 0
    const two = sessions.commit(await sessions.open(ref), { events: turnEvents(2) }, TURN_END)
    expect(await settledSoon(two)).toBe(false)
    expect(writes.filter((w) => w.includes('log/'))).toEqual([])
    release()
    const result = await two
    committed.push(...turnEvents(2))
    expect(result.maintenanceError).toBeUndefined()
    expect(result.batch).toBe(one.batch + 1)
    const manifestAt = writes.indexOf('put session-1/manifest.json')
    expect(manifestAt).toBeGreaterThanOrEqual(0)
    expect(manifestAt).toBeLessThan(writes.indexOf('put log/0000000002.json'))
    await sessions.settled()
    await expectFilesMatch(inner, ref.sessionId, committed)
  })
})
