import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { nodeGzip } from '../../adapters/zlib/node-gzip.ts'
import { serializeBatch } from '../../src/contract/batch.ts'
import {
  batchText,
  isGzip,
  parseStoredBatch,
  storedBatchBody,
} from '../../src/contract/batch-encoding.ts'
import { SessionService } from '../../src/core/session-service.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { engineDeps } from '../support/engine-deps.ts'
import { ScriptedModelClient } from '../support/scripted-model.ts'

/**
 * Batch version 7 is version 6's document stored as its text or gzip-compressed, as the writer
 * chose: as text when the store keeps it in no more room than gzip would (its
 * `allocationBytes`, a filesystem block), compressed otherwise. Read-only fixtures
 * (test/fixtures/store/v7/): a version 7 batch stored as text, and one compressed by another gzip
 * implementation with its text beside it.
 */
const fixtures = fileURLToPath(new URL('../fixtures/store/', import.meta.url))
const bytes = async (path: string) => new Uint8Array(await readFile(join(fixtures, path)))
const text = (path: string) => readFile(join(fixtures, path), 'utf8')
const decode = (body: Uint8Array) => new TextDecoder().decode(body)

const failsWith = async (code: string, run: () => Promise<unknown>) => {
  await expect(run()).rejects.toMatchObject({ code })
}

describe('batch version 7: stored as text or compressed', () => {
  it('reads a version 7 batch stored as text, and its document writes back byte for byte', async () => {
    const stored = await bytes('v7/batch-text.json')
    expect(isGzip(stored)).toBe(false)
    const batch = await parseStoredBatch(stored)
    expect(batch).toMatchObject({ version: 7, batch: 2 })
    expect(batch.state).not.toHaveProperty('engine_version')
    expect(serializeBatch(batch)).toBe(decode(stored))
  })

  it('reads a version 7 batch compressed by another gzip', async () => {
    const stored = await bytes('v7/batch-compressed.json.gz')
    expect(isGzip(stored)).toBe(true)
    const batch = await parseStoredBatch(stored)
    expect(batch).toMatchObject({ version: 7, batch: 4 })
    expect(serializeBatch(batch)).toBe(await text('v7/batch-compressed.json'))
  })

  it('still refuses versions 5–6 stored as text and 1–4 compressed, and knows no version 8', async () => {
    const v6 = (await text('v7/batch-text.json')).replace('"version":7,', '"version":6,')
    const encoded = new TextEncoder().encode(v6)
    await failsWith('corrupt_data', () => parseStoredBatch(encoded))
    const v8 = (await text('v7/batch-text.json')).replace('"version":7,', '"version":8,')
    await failsWith('unsupported_version', () => parseStoredBatch(new TextEncoder().encode(v8)))
  })

  it('keeps a text up to `textUpTo` bytes of UTF-8 as it is, compresses a longer one', async () => {
    const source = await text('v7/batch-compressed.json')
    const size = new TextEncoder().encode(source).byteLength
    const v7 = { version: 7 as const }
    const asText = await storedBatchBody(v7, source, { gzip: nodeGzip, textUpTo: size })
    expect(asText.contentType).toBe('application/json')
    expect(decode(asText.body)).toBe(source)
    for (const textUpTo of [size - 1, 0, undefined]) {
      const packed = await storedBatchBody(v7, source, { gzip: nodeGzip, textUpTo })
      expect(packed.contentType).toBe('application/gzip')
      expect(decode(await batchText(packed.body))).toBe(source)
    }
    // Counted in bytes, not UTF-16 code units: 'é' is two bytes.
    const accented = source.replace('"batch":4', '"batch":4,"turn_id":"éé"')
    const units = accented.length
    const packed = await storedBatchBody(v7, accented, { gzip: nodeGzip, textUpTo: units })
    expect(packed.contentType).toBe('application/gzip')
    // Versions 5 and 6 are compressed whatever the store.
    const v6 = await storedBatchBody({ version: 6 }, source, { textUpTo: 1 << 20 })
    expect(isGzip(v6.body)).toBe(true)
  })
})

describe('what a session store writes', () => {
  const folders: string[] = []
  afterEach(async () => {
    for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
  })

  async function runTurns(store: ObjectStore) {
    const model = new ScriptedModelClient()
    const sessions = new SessionStore({ store, gzip: nodeGzip })
    const service = new SessionService({ ...engineDeps({ store, model, fetch }, []), sessions })
    const { session_id } = await service.createSession('t1', {})
    model.enqueue({ text: 'done' })
    await service.stepTurn('t1', session_id, { input: 'go' })
    model.enqueue({ text: `long answer ${'abcdefghij'.repeat(600)}` })
    await service.stepTurn('t1', session_id, { input: 'again' })
    const ref = { tenant: 't1', workspace: 'default', sessionId: session_id }
    const warm = await sessions.open(ref)
    const cold = await new SessionStore({ store, cacheSize: 0 }).open(ref)
    expect(cold.state).toEqual(warm.state)
    expect(cold.lastBatch).toBe(warm.lastBatch)
    const log = `t1/default/.vtcode/sessions/${session_id}/log/`
    const keys = (await store.list(log)).objects.map((o) => o.key)
    return Promise.all(keys.map(async (key) => (await store.get(key))?.body as Uint8Array))
  }

  it('on the fs store: batches that fit a block as text, longer ones compressed; all read back', async () => {
    const root = await mkdtemp(join(tmpdir(), 'batch-text-'))
    folders.push(root)
    const store = new FsObjectStore({ root })
    expect(store.allocationBytes).toBe(4096)
    const bodies = await runTurns(store)
    const small = bodies.filter((body) => body.byteLength <= 4096 && !isGzip(body))
    const packed = bodies.filter(isGzip)
    expect(small.length).toBeGreaterThan(0)
    expect(packed.length).toBeGreaterThan(0)
    for (const body of bodies) expect((await parseStoredBatch(body)).version).toBe(7)
    for (const body of packed) expect((await batchText(body)).byteLength).toBeGreaterThan(4096)
    expect(await readdir(join(root, '.turnline-fs', 'tmp'))).toEqual([])
  })

  it('on a store where every byte counts: every batch compressed', async () => {
    const bodies = await runTurns(new MemoryObjectStore())
    expect(bodies.length).toBeGreaterThan(0)
    for (const body of bodies) {
      expect(isGzip(body)).toBe(true)
      expect((await parseStoredBatch(body)).version).toBe(7)
    }
  })
})
