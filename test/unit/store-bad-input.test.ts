import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { MAX_EVENT_LINE_BYTES } from '../../src/store/commit-batch.ts'
import { EventBuffer } from '../../src/store/event-buffer.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { threadStarted, turnEvents } from '../support/sample-events.ts'

const ref = { tenant: 't1', workspace: 'w1', sessionId: 'session-1' }
const bytes = (s: string) => new TextEncoder().encode(s)

async function started() {
  const store = new MemoryObjectStore()
  const sessions = new SessionStore({ store })
  await sessions.create(ref, 'thread-1', { events: [threadStarted('thread-1')] })
  await sessions.commit(await sessions.open(ref), { events: turnEvents(1) })
  return { store, sessions, keys: sessions.keys(ref) }
}

describe('bad input to the session store', () => {
  it('rejects ids that could leave the session folder', () => {
    const sessions = new SessionStore({ store: new MemoryObjectStore() })
    for (const sessionId of [
      '../x',
      'a/b',
      '..',
      '.hidden',
      '',
      'a\\b',
      'x'.repeat(200),
      'a\u0000b',
    ]) {
      expect(() => sessions.keys({ ...ref, sessionId }), sessionId).toThrow(
        expect.objectContaining({ code: 'invalid_input' }),
      )
    }
    expect(() => sessions.keys({ ...ref, tenant: '../other' })).toThrow(
      expect.objectContaining({ code: 'invalid_input' }),
    )
  })

  it('reports a corrupt or truncated batch as corrupt_data and overwrites nothing', async () => {
    for (const body of ['{"format":"turnline.batch","version":1,"batch":1', 'not json', '\u00ff']) {
      const { store, keys } = await started()
      await store.put(keys.batch(2), bytes(body))
      const before = await store.get(keys.batch(2))
      const fresh = new SessionStore({ store })
      await expect(fresh.open(ref), body).rejects.toMatchObject({ code: 'corrupt_data' })
      expect((await store.get(keys.batch(2)))?.etag).toBe(before?.etag)
    }
  })

  it('refuses a manifest of an unknown version without touching it', async () => {
    const { store, keys } = await started()
    const current = JSON.parse(new TextDecoder().decode((await store.get(keys.manifest))!.body))
    await store.put(keys.manifest, bytes(JSON.stringify({ ...current, schema_version: 2 })))
    const before = await store.get(keys.manifest)
    const fresh = new SessionStore({ store })
    await expect(fresh.open(ref)).rejects.toMatchObject({ code: 'unsupported_version' })
    await expect(fresh.readEvents(ref, 0)).rejects.toMatchObject({ code: 'unsupported_version' })
    expect((await store.get(keys.manifest))?.etag).toBe(before?.etag)
  })

  it('rejects empty and oversize events with clear errors', async () => {
    const { sessions, store, keys } = await started()
    const snapshot = await sessions.open(ref)
    await expect(sessions.commit(snapshot, { events: [] })).rejects.toMatchObject({
      code: 'invalid_input',
    })
    const huge = 'x'.repeat(MAX_EVENT_LINE_BYTES)
    await expect(
      sessions.commit(snapshot, {
        events: [
          { type: 'item.completed', item: { id: 'item_0', type: 'agent_message', text: huge } },
        ],
      }),
    ).rejects.toMatchObject({ code: 'payload_too_large' })
    expect(await store.get(keys.batch(2))).toBeNull()
  })

  it('fails closed when the event buffer overflows, keeping what it accepted', () => {
    const buffer = new EventBuffer<number>(3, 1 << 20)
    buffer.push(1, '{}')
    buffer.push(2, '{}')
    buffer.push(3, '{}')
    expect(() => buffer.push(4, '{}')).toThrow(expect.objectContaining({ code: 'buffer_overflow' }))
    expect(() => buffer.push(5, '{}')).toThrow(expect.objectContaining({ code: 'buffer_overflow' }))
    expect(buffer.pending()).toEqual([1, 2, 3])
    const small = new EventBuffer<string>(100, 300)
    small.push('a', 'x'.repeat(50))
    expect(() => small.push('b', 'x'.repeat(50))).toThrow(
      expect.objectContaining({ code: 'buffer_overflow' }),
    )
    expect(small.failed?.code).toBe('buffer_overflow')
  })
})
