import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { prefersAsync } from '../../functions/http/background-answer.ts'
import { parseWorkRecord, serializeWorkRecord } from '../../src/contract/work-record.ts'
import { sweepRetention } from '../../src/store/retention-sweep.ts'
import { locationOf, WorkQueue } from '../../src/store/work-queue.ts'
import { sweepWork } from '../../src/store/work-retention.ts'

const fixture = () =>
  readFileSync(new URL('../fixtures/engine/work-record.json', import.meta.url), 'utf8')

describe('the work record (read-only fixture)', () => {
  it('reads a stored record and writes it back byte for byte', () => {
    const record = parseWorkRecord(fixture())
    expect(record).toMatchObject({
      kind: 'turn',
      source: 'webhook',
      tenant: 'acme',
      attempts: 1,
      last_error: { code: 'storage_unavailable' },
    })
    expect(serializeWorkRecord(record)).toBe(fixture().trim())
  })

  it('refuses another version, another format and a bad shape', () => {
    const doc = JSON.parse(fixture()) as Record<string, unknown>
    const bad = (patch: Record<string, unknown>) => () =>
      parseWorkRecord(JSON.stringify({ ...doc, ...patch }))
    expect(bad({ version: 2 })).toThrow(expect.objectContaining({ code: 'unsupported_version' }))
    expect(bad({ format: 'turnline.other' })).toThrow(
      expect.objectContaining({ code: 'corrupt_data' }),
    )
    expect(bad({ work_id: 'NOT-HEX' })).toThrow(expect.objectContaining({ code: 'corrupt_data' }))
  })
})

describe('WorkQueue', () => {
  it('records create-only, answers the first record to a second, and lists every tenant', async () => {
    const store = new MemoryObjectStore()
    const queue = new WorkQueue(store, 'pfx')
    const record = parseWorkRecord(fixture())
    expect(await queue.record(record)).toEqual({ created: true })
    const again = await queue.record({ ...record, attempts: 0 })
    expect(again).toMatchObject({ created: false, existing: { record } })
    const other = { ...record, tenant: 'beta', work_id: 'a'.repeat(32) }
    await queue.record(other)
    const keys = (await store.list('pfx/.turnline/work/pending/')).objects.map((o) => o.key)
    expect(keys).toHaveLength(2)
    const first = await queue.list(undefined, 1)
    expect(first.items).toEqual([
      { tenant: 'acme', session_id: record.session_id, work_id: record.work_id },
    ])
    const second = await queue.list(first.next, 1)
    expect(second.items.map((at) => at.tenant)).toEqual(['beta'])
  })

  it('rewrites only the version it read, and deletes one record without touching another', async () => {
    const queue = new WorkQueue(new MemoryObjectStore(), '')
    const record = parseWorkRecord(fixture())
    await queue.record(record)
    const read = await queue.read(record)
    if (!read) throw new Error('missing')
    const updated = await queue.update(read, { ...record, attempts: 2 })
    expect(updated?.record.attempts).toBe(2)
    expect(await queue.update(read, { ...record, attempts: 3 })).toBeNull()
    const sibling = { ...record, work_id: 'b'.repeat(32) }
    await queue.record(sibling)
    await queue.remove(record)
    expect(await queue.read(record)).toBeNull()
    expect(await queue.read(sibling)).not.toBeNull()
    expect(await queue.update(read, record)).toBeNull()
  })

  it('names only record keys as locations, and refuses tenants the deployment keeps', async () => {
    expect(locationOf(`acme/s1/${'c'.repeat(32)}.json`)).toEqual({
      tenant: 'acme',
      session_id: 's1',
      work_id: 'c'.repeat(32),
    })
    expect(locationOf('acme/s1/notes.txt')).toBeUndefined()
    expect(locationOf(`acme/s1/x/${'c'.repeat(32)}.json`)).toBeUndefined()
    const queue = new WorkQueue(new MemoryObjectStore(), '')
    await expect(
      queue.read({ tenant: '.turnline', session_id: 's', work_id: 'c'.repeat(32) }),
    ).rejects.toMatchObject({ code: 'invalid_input' })
  })
})

describe('Prefer: respond-async (RFC 7240)', () => {
  it('finds the preference among others, in any case, with parameters', () => {
    expect(prefersAsync('respond-async')).toBe(true)
    expect(prefersAsync('return=minimal, Respond-Async; wait=10')).toBe(true)
    expect(prefersAsync('respond-asynchronously')).toBe(false)
    expect(prefersAsync('wait=10')).toBe(false)
    expect(prefersAsync(undefined)).toBe(false)
  })
})

describe('the retention of background work', () => {
  it('deletes failed records a week after their failure and done markers two days after the step', async () => {
    const store = new MemoryObjectStore()
    const queue = new WorkQueue(store, 'pfx')
    const DAY = 86_400_000
    const start = Date.parse('2026-03-01T00:00:00Z')
    const record = parseWorkRecord(fixture())
    const failed = {
      code: 'session_completed',
      message: 'ended',
      at: new Date(start).toISOString(),
    }
    await queue.retire({ ...record, failed })
    const fresh = {
      ...record,
      work_id: 'd'.repeat(32),
      failed: { ...failed, at: new Date(start + 6 * DAY).toISOString() },
    }
    await queue.retire(fresh)
    const step = { tenant: 'acme', session_id: 'loop.nightly', work_id: 'e'.repeat(32) }
    await queue.markDone(step, start)
    // A marker from before markers carried their time (an empty object) goes at once.
    await store.put(
      `pfx/.turnline/work/done/acme/loop.nightly/${'f'.repeat(32)}.json`,
      new Uint8Array(),
    )
    await store.put(
      'pfx/.turnline/work/failed/acme/s1/unreadable.json',
      new TextEncoder().encode('{'),
    )

    expect(await sweepWork(store, { now: start + DAY, prefix: 'pfx' })).toEqual({
      failed: 0,
      done: 1,
    })
    expect(await queue.isDone(step)).toBe(true)
    expect(await sweepWork(store, { now: start + 7 * DAY, prefix: 'pfx' })).toEqual({
      failed: 1,
      done: 1,
    })
    expect(await queue.isDone(step)).toBe(false)
    expect(await queue.readFailed(record)).toBeNull()
    expect(await queue.readFailed(fresh)).toMatchObject({ failed: { code: 'session_completed' } })
    const left = (await store.list('pfx/.turnline/work/')).objects.map((o) => o.key)
    expect(left).toHaveLength(2) // the fresh failure, and the unreadable object for an operator
    const swept = await sweepRetention(store, { now: start + 14 * DAY, prefix: 'pfx' })
    expect(swept.work).toEqual({ failed: 1, done: 0 })
  })
})
