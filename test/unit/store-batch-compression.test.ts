import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { nodeGzip } from '../../adapters/zlib/node-gzip.ts'
import { BATCH_VERSION, parseBatch, serializeBatch } from '../../src/contract/batch.ts'
import {
  batchText,
  compressBatchText,
  type Gzip,
  isGzip,
  parseStoredBatch,
} from '../../src/contract/batch-encoding.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { listAll } from '../../src/store/list-all.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { engineDeps } from '../support/engine-deps.ts'
import { ScriptedModelClient } from '../support/scripted-model.ts'
import { expectFilesMatchLog } from '../support/session-files.ts'
import {
  coldTurn,
  continueWithToolTurns,
  fixtureSession,
} from '../support/store-fixture-session.ts'

/**
 * Batch version 5 is version 4's document stored gzip-compressed; version 6 writes of the engine
 * state only the fields the batch changed. Read-only fixtures: a version 5 batch compressed by
 * another gzip implementation (test/fixtures/store/v5/, with its text beside it), a version 6
 * batch (test/fixtures/store/v6/) and a whole session written with version 4 batches and a
 * version 4 checkpoint (test/fixtures/store/v4-session/), which keeps reading and continuing.
 */
const fixtures = fileURLToPath(new URL('../fixtures/store/', import.meta.url))
const bytes = (path: string) => new Uint8Array(readFileSync(join(fixtures, path)))
const text = (path: string) => readFileSync(join(fixtures, path), 'utf8')
const decode = (body: Uint8Array) => new TextDecoder().decode(body)
const encode = (value: string) => new TextEncoder().encode(value)

async function storedBatches(store: MemoryObjectStore, sessionId: string) {
  const { objects } = await listAll(store, `t1/default/.vtcode/sessions/${sessionId}/log/`)
  return Promise.all(
    objects.map(async (o) => ({ key: o.key, body: (await store.get(o.key))?.body as Uint8Array })),
  )
}

const failsWith = async (code: string, run: () => Promise<unknown>) => {
  await expect(run()).rejects.toMatchObject({ code })
}

describe('batch version 5: stored compressed', () => {
  it('is still read; batches are written with version 7 (version 6 stored as text or compressed)', () => {
    expect(BATCH_VERSION).toBe(7)
  })

  it('reads a version 5 fixture, and its document writes back byte for byte', async () => {
    const stored = bytes('v5/batch-compressed.json.gz')
    expect(isGzip(stored)).toBe(true)
    const batch = await parseStoredBatch(stored)
    expect(batch).toMatchObject({ version: 5, batch: 4 })
    const [tool] = batch.history?.append ?? []
    expect(tool).toMatchObject({ role: 'tool', content: expect.stringMatching(/.{200}/) })
    const source = text('v5/batch-compressed.json')
    expect(decode(await batchText(stored))).toBe(source)
    expect(serializeBatch(batch)).toBe(source)
    // Our own compression reads back to the same text.
    expect(decode(await batchText(await compressBatchText(source)))).toBe(source)
  })

  it('reads version 1–4 batches stored as text, as before', async () => {
    for (const path of ['v4/batch-content-refs.json', 'v3/batch-order.json']) {
      const batch = await parseStoredBatch(bytes(path))
      expect(serializeBatch(batch)).toBe(text(path))
    }
  })

  it('refuses a version stored the wrong way, and gzip that does not decompress', async () => {
    const v4 = text('v4/batch-content-refs.json')
    await failsWith('corrupt_data', async () => parseStoredBatch(await compressBatchText(v4)))
    await failsWith('corrupt_data', async () =>
      parseStoredBatch(encode(text('v5/batch-compressed.json'))),
    )
    const stored = bytes('v5/batch-compressed.json.gz')
    await failsWith('corrupt_data', () => parseStoredBatch(stored.slice(0, stored.length / 2)))
    await failsWith('corrupt_data', () =>
      parseStoredBatch(new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6])),
    )
    const future = JSON.parse(text('v5/batch-compressed.json'))
    await failsWith('unsupported_version', async () =>
      parseStoredBatch(await compressBatchText(JSON.stringify({ ...future, version: 8 }))),
    )
  })

  it('continues a session of version 4 batches and checkpoint, past its next checkpoint', async () => {
    const { store, files, sessionId } = await fixtureSession(join(fixtures, 'v4-session'))
    const root = `t1/default/.vtcode/sessions/${sessionId}/`
    const old = await storedBatches(store, sessionId)
    expect(old.length).toBe(19)
    const outputs = old.flatMap(({ body }) =>
      (parseBatch(body).history?.append ?? []).flatMap((m) =>
        m.role === 'tool' ? [m.content] : [],
      ),
    )
    expect(outputs.length).toBe(9)
    // Batches 19–32: the checkpoint after batch 32 is the first this code writes.
    const engine = await continueWithToolTurns(store, sessionId, 10, 16)
    // The model saw every old output whole, read from the version 4 batches and checkpoint.
    const first = JSON.stringify(engine.model.requests[0]?.messages)
    for (const output of outputs) expect(first).toContain(JSON.stringify(output))

    // Old batches unchanged; the new ones compressed (a memory store: every byte counts), version 7.
    const after = await storedBatches(store, sessionId)
    for (const { key, body } of old) expect(after.find((b) => b.key === key)?.body).toEqual(body)
    for (const { body } of after.slice(old.length)) {
      expect(isGzip(body)).toBe(true)
      expect((await parseStoredBatch(body)).version).toBe(7)
    }
    const checkpoint = JSON.parse(
      decode((await store.get(`${root}state/0000000032.json`))?.body as Uint8Array),
    )
    // The version 4 checkpoint named its transcript from batch 0: so does the new one.
    expect(checkpoint).toMatchObject({ version: 4, history_from: { batch: 0 } })
    expect(checkpoint).not.toHaveProperty('history')
    // What VT Code's readers see: events.jsonl keeps the old session's bytes, then the new lines.
    const events = (await store.get(`${root}events.jsonl`))?.body as Uint8Array
    const before = files.get(`${root}events.jsonl`) as Uint8Array
    expect(events.slice(0, before.length)).toEqual(before)
    await expectFilesMatchLog(store, engine.service, sessionId, 'continued')

    // A cold process reads both kinds back whole.
    const cold = await coldTurn(store, sessionId, 17)
    const { request } = cold
    for (const output of outputs) expect(request).toContain(JSON.stringify(output))
    for (let n = 10; n <= 16; n++)
      expect(request).toContain(`answer of turn ${n} ${'z'.repeat(200)}`)
    await expectFilesMatchLog(store, cold.service, sessionId, 'cold')
  })
})

describe('batch version 6: the state fields a batch changed', () => {
  it('reads a version 6 fixture, and its document writes back byte for byte', async () => {
    const batch = await parseStoredBatch(bytes('v6/batch-state-changes.json.gz'))
    expect(batch).toMatchObject({ version: 6, batch: 2 })
    expect(Object.keys(batch.state ?? {})).toContain('last_assistant_text')
    expect(batch.state).not.toHaveProperty('engine_version')
    expect(serializeBatch(batch)).toBe(text('v6/batch-state-changes.json'))
  })

  it('writes only what changed, and a cold process folds the same state', async () => {
    const { store, sessionId } = await fixtureSession(join(fixtures, 'v4-session'))
    const engine = await continueWithToolTurns(store, sessionId, 10, 12)
    const warm = await engine.deps.sessions.open({ tenant: 't1', workspace: 'default', sessionId })
    const stored = await storedBatches(store, sessionId)
    const all = await Promise.all(
      stored.map(async ({ body }) => (await parseStoredBatch(body)).state),
    )
    const states = all.slice(19)
    for (const state of states) {
      expect(state).toBeDefined()
      expect(state).not.toHaveProperty('engine_version') // written once, by batch 0
    }
    // Each new batch holds only fields whose JSON differs from the state folded before it.
    let before: Record<string, unknown> = {}
    for (const [n, state] of all.entries()) {
      if (n >= 19) {
        for (const [key, value] of Object.entries(state ?? {})) {
          expect(JSON.stringify(value)).not.toBe(JSON.stringify(before[key]))
        }
      }
      before = { ...before, ...state }
    }
    const cold = new SessionStore({ store, cacheSize: 0 })
    const folded = await cold.open({ tenant: 't1', workspace: 'default', sessionId })
    expect(folded.state).toEqual(warm.state)
  })
})

describe("a platform's own gzip", () => {
  it('node:zlib writes batches the Web-standard reader reads back, and SessionStore uses it', async () => {
    const source = text('v5/batch-compressed.json')
    const big = JSON.stringify({ ...JSON.parse(source), turn_id: 'x'.repeat(300 * 1024) })
    for (const doc of [source, big]) {
      const stored = await compressBatchText(doc, nodeGzip)
      expect(decode(await batchText(stored))).toBe(doc)
    }
    const store = new MemoryObjectStore()
    let calls = 0
    const counted: Gzip = (bytes) => {
      calls += 1
      return nodeGzip(bytes)
    }
    const model = new ScriptedModelClient()
    const deps = engineDeps({ store, model, fetch }, [])
    const service = new SessionService({
      ...deps,
      sessions: new SessionStore({ store, gzip: counted }),
    })
    const { session_id } = await service.createSession('t1', {})
    model.enqueue({ text: 'done' })
    expect((await service.stepTurn('t1', session_id, { input: 'go' })).status).toBe('completed')
    expect(calls).toBe(2)
    const cold = await coldTurn(store, session_id, 2)
    expect(cold.request).toContain('done')
  })
})
