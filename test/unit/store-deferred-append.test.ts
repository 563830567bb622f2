import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { threadStarted, turnEvents } from '../support/sample-events.ts'
import { expectFilesMatch } from '../support/session-files.ts'

/**
 * A commit before a turn's tools (`maintain: false`, `deferAppend`) answers once its batch is
 * durable and leaves its append to events.jsonl running beside the tools; the session's next
 * commit waits for it before writing its own batch, so the store sees the same writes in the
 * same order, and a failed deferred append is reported by that commit and repaired as any.
 */
const ref = { tenant: 't1', workspace: 'w1', sessionId: 'session-1' }

/** A memory store whose appends to events.jsonl wait for `release()` (or fail with `fail`). */
function gated(inner: MemoryObjectStore) {
  const writes: string[] = []
  let gate: { promise: Promise<void>; release: () => void } | undefined
  let fail = false
  const store: ObjectStore = {
    get: (key) => inner.get(key),
    list: (prefix, options) => inner.list(prefix, options),
    delete: (key) => inner.delete(key),
    put: (key, body, options) => {
      writes.push(`put ${key.split('/').slice(-2).join('/')}`)
      return inner.put(key, body, options)
    },
    append: async (key, bytes, options) => {
      const name = key.split('/').slice(-2).join('/')
      if (gate !== undefined && key.endsWith('events.jsonl')) {
        writes.push(`append ${name} (held)`)
        await gate.promise
        if (fail) throw new Error('disk full')
      }
      writes.push(`append ${name}`)
      return inner.append!(key, bytes, options)
    },
  }
  return {
    store,
    writes,
    hold(failing = false) {
      fail = failing
      let release = () => {}
      const promise = new Promise<void>((resolve) => {
        release = resolve
      })
      gate = { promise, release }
      return () => {
        gate = undefined
        release()
      }
    },
  }
}

/** Whether `promise` settles within the macrotask queue's next turns (a head start for a bug). */
async function settledSoon(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  void promise.then(
    () => {
      done = true
    },
    () => {
      done = true
    },
  )
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
  return done
}

/** A session with a tool turn's first commit made, its append held (failing when asked). */
async function toolTurnStarted(failing = false) {
  const inner = new MemoryObjectStore()
  const { store, writes, hold } = gated(inner)
  const sessions = new SessionStore({ store, checkpointEvery: 64 })
  const committed: ThreadEvent[] = [threadStarted('thread-1')]
  await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
  const [started, first, ...rest] = turnEvents(1, 2) as [ThreadEvent, ThreadEvent, ...ThreadEvent[]]
  const release = hold(failing)
  const before = sessions.commit(
    await sessions.open(ref),
    { events: [started, first] },
    { maintain: false, deferAppend: true },
  )
  committed.push(started, first)
  return { inner, writes, sessions, committed, rest, release, before }
}

describe('the append of a commit before tools runs beside them', () => {
  it('answers before the append, and the next commit writes after it', async () => {
    const { inner, writes, sessions, committed, rest, release, before } = await toolTurnStarted()
    // answered while its append is held (it would never be, were the append awaited)
    await before
    writes.length = 0
    const end = sessions.commit((await before).snapshot, { events: rest })
    // the next batch waits for the deferred append
    expect(await settledSoon(end)).toBe(false)
    expect(writes).toEqual([])
    release()
    const result = await end
    expect(result.maintenanceError).toBeUndefined()
    committed.push(...rest)
    expect(writes.slice(0, 2)).toEqual(['append session-1/events.jsonl', 'put log/0000000002.json'])
    await expectFilesMatch(inner, ref.sessionId, committed)
  })

  it('reports a deferred append that failed with the next commit, whose append repairs the file', async () => {
    const { inner, sessions, committed, rest, release, before } = await toolTurnStarted(true)
    const { snapshot } = await before
    release()
    const end = await sessions.commit(snapshot, { events: rest })
    expect(String(end.maintenanceError)).toContain('disk full')
    committed.push(...rest)
    await expectFilesMatch(inner, ref.sessionId, committed)
  })
})
