import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { threadStarted, turnEvents } from '../support/sample-events.ts'
import { expectFilesMatch } from '../support/session-files.ts'

/**
 * On a store that says when a create-only put's name exists (`PutOptions.onNamed`, the fs store
 * before its folder fsync), a commit appends its lines to events.jsonl while the put makes the
 * batch durable; it still answers only after both. A put that fails after the name was made
 * leaves lines the next writer checks against the log.
 */
const ref = { tenant: 't1', workspace: 'w1', sessionId: 'session-1' }

/** A memory store whose create-only puts name the object, call onNamed, then "sync" (a gate). */
function syncing(inner: MemoryObjectStore) {
  const steps: string[] = []
  let failSync = false
  const store: ObjectStore = {
    get: (key) => inner.get(key),
    list: (prefix, options) => inner.list(prefix, options),
    delete: (key) => inner.delete(key),
    put: async (key, body, options = {}) => {
      const { onNamed, ...rest } = options
      const name = key.split('/').slice(-2).join('/')
      const written = await inner.put(key, body, rest)
      if (onNamed === undefined) return written
      steps.push(`named ${name}`)
      onNamed()
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
      steps.push(`synced ${name}`)
      if (failSync) throw new Error('fsync failed')
      return written
    },
    append: async (key, bytes, options) => {
      steps.push(`append ${key.split('/').slice(-2).join('/')}`)
      return inner.append!(key, bytes, options)
    },
  }
  return { store, steps, failNextSync: () => (failSync = true), recover: () => (failSync = false) }
}

describe('a commit appends its lines once its batch has its name', () => {
  it('appends while the batch is made durable, and answers after both', async () => {
    const inner = new MemoryObjectStore()
    const { store, steps } = syncing(inner)
    const sessions = new SessionStore({ store, checkpointEvery: 64 })
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    steps.length = 0
    const events = turnEvents(1)
    await sessions.commit(await sessions.open(ref), { events })
    expect(steps).toEqual([
      'named log/0000000001.json',
      'append session-1/events.jsonl',
      'append index/turns.json',
      'synced log/0000000001.json',
    ])
    await expectFilesMatch(inner, ref.sessionId, [threadStarted('thread-1'), ...events])
  })

  it('after a put that failed once the name was made, the next commit finds the files consistent', async () => {
    const inner = new MemoryObjectStore()
    const { store, failNextSync, recover } = syncing(inner)
    const sessions = new SessionStore({ store, checkpointEvery: 64 })
    const committed: ThreadEvent[] = [threadStarted('thread-1')]
    await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
    const first = turnEvents(1)
    failNextSync()
    await expect(sessions.commit(await sessions.open(ref), { events: first })).rejects.toThrow(
      'fsync failed',
    )
    recover()
    // the batch has its name (here it stays): the next writer folds it and continues after it
    committed.push(...first)
    const second = turnEvents(2)
    await sessions.commit(await sessions.open(ref), { events: second })
    committed.push(...second)
    await expectFilesMatch(inner, ref.sessionId, committed)
  })
})
