import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { parseBatch, serializeBatch } from '../../src/contract/batch.ts'
import { batchText } from '../../src/contract/batch-encoding.ts'
import { listAll } from '../../src/store/list-all.ts'
import { startScriptedEngine } from '../support/scripted-engine.ts'
import { expectFilesMatchLog } from '../support/session-files.ts'
import {
  coldTurn,
  continueWithToolTurns,
  fixtureSession,
} from '../support/store-fixture-session.ts'

/**
 * Batch version 4 stores each text once: the transcript's tool message and answer name the item
 * whose event holds the text (`content_of`) instead of repeating it. Read-only fixtures: a
 * version 4 batch (test/fixtures/store/v4/) and a whole session written with version 3 batches
 * and a version 3 checkpoint, outputs inline (test/fixtures/store/v3-session/), which keeps
 * reading and continuing unchanged.
 */
const fixtures = fileURLToPath(new URL('../fixtures/store/', import.meta.url))
const text = (path: string) => readFileSync(join(fixtures, path), 'utf8')
const decode = (body: Uint8Array | undefined) => new TextDecoder().decode(body)

/** A store holding the version 3 session fixture; its session id and the folder's keys. */
async function v3Session() {
  const { store, files, sessionId } = await fixtureSession(join(fixtures, 'v3-session'))
  const texts = new Map([...files].map(([key, body]) => [key, decode(body)]))
  return { store, files: texts, sessionId }
}

async function batchesOf(store: MemoryObjectStore, sessionId: string) {
  const { objects } = await listAll(store, `t1/default/.vtcode/sessions/${sessionId}/log/`)
  return Promise.all(
    objects.map(async (o) => {
      const body = (await store.get(o.key))?.body ?? new Uint8Array()
      return { key: o.key, text: decode(await batchText(body)), stored: decode(body) }
    }),
  )
}

describe('batch version 4: each text stored once', () => {
  it('reads a version 4 batch with its contents put back, and writes it back byte for byte', () => {
    const source = text('v4/batch-content-refs.json')
    const batch = parseBatch(source)
    const [tool, answer] = batch.history?.append ?? []
    const items = batch.events.map((line) => line.event)
    const output = items.find((e) => e.type === 'item.completed' && e.item.type === 'tool_output')
    const said = items.find((e) => e.type === 'item.completed' && e.item.type === 'agent_message')
    expect(tool).toMatchObject({ role: 'tool', content: expect.stringMatching(/.{200}/) })
    expect(output).toMatchObject({ item: { output: tool?.content } })
    expect(said).toMatchObject({ item: { text: answer?.content } })
    expect(source).not.toContain(`"content":${JSON.stringify(tool?.content)}`)
    expect(serializeBatch(batch)).toBe(source)
  })

  it('refuses a message that names an item the batch does not complete', () => {
    const doc = JSON.parse(text('v4/batch-content-refs.json'))
    doc.history.append[0].content_of = 'item_9:output'
    expect(() => parseBatch(JSON.stringify(doc))).toThrow(
      expect.objectContaining({ code: 'corrupt_data' }),
    )
  })

  it('keeps short texts inline, and version 3 batches as they were', () => {
    const doc = JSON.parse(text('v4/batch-content-refs.json'))
    const v3 = parseBatch(JSON.stringify({ ...doc, version: 3, history: undefined }))
    expect(serializeBatch(v3)).not.toContain('content_of')
    const source = text('v3/batch-order.json')
    expect(serializeBatch(parseBatch(source))).toBe(source)
  })

  it('continues a session whose version 3 batches hold the outputs inline', async () => {
    const { store, files, sessionId } = await v3Session()
    const oldBatches = await batchesOf(store, sessionId)
    const outputs = oldBatches.flatMap(({ text: body }) =>
      (parseBatch(body).history?.append ?? []).flatMap((m) =>
        m.role === 'tool' ? [m.content] : [],
      ),
    )
    expect(outputs.length).toBe(9)
    for (const body of oldBatches.map((b) => b.text)) expect(body).toContain('"version":3')

    const engine = startScriptedEngine({ store })
    engine.receiver.setReply(() => ({ body: `fresh answer ${'x'.repeat(300)}` }))
    const args = JSON.stringify({ q: 'turn 10' })
    engine.model.enqueue(
      { toolCalls: [{ id: 'call_10', name: 'lookup', arguments: args }] },
      { text: `done 10: ${'y'.repeat(120)}` },
    )
    const turn = await engine.service.stepTurn('t1', sessionId, { input: 'task 10' })
    expect(turn.status).toBe('completed')
    // The model saw every old output whole, read from the version 3 batches and checkpoint.
    const first = JSON.stringify(engine.model.requests[0]?.messages)
    for (const output of outputs) expect(first).toContain(JSON.stringify(output))
    const second = JSON.stringify(engine.model.requests[1]?.messages)
    expect(second).toContain(`fresh answer ${'x'.repeat(300)}`)

    // Old objects unchanged; the new batches (version 6: version 4's document, compressed, its
    // state what changed) refer to their events.
    const after = await batchesOf(store, sessionId)
    for (const old of oldBatches) {
      expect(after.find((b) => b.key === old.key)?.stored).toBe(files.get(old.key))
    }
    const added = after.slice(oldBatches.length)
    expect(added.length).toBe(2)
    for (const { text: body } of added) expect(body).toContain('"version":7')
    expect(added[1]?.text).toContain('"content_of":"item_')
    expect(added[1]?.text.split(`fresh answer ${'x'.repeat(300)}`).length).toBe(2) // once
    await expectFilesMatchLog(store, engine.service, sessionId, 'continued')

    // A cold process reads the version 4 batches back whole.
    const cold = await coldTurn(store, sessionId, 11)
    const { request } = cold
    expect(request).toContain(`fresh answer ${'x'.repeat(300)}`)
    expect(request).toContain(`done 10: ${'y'.repeat(120)}`)
    await expectFilesMatchLog(store, cold.service, sessionId, 'cold')
  })

  it('continues it past its next checkpoint, which names the version 3 one', async () => {
    const { store, sessionId } = await v3Session()
    const outputs = (await batchesOf(store, sessionId)).flatMap(({ text: body }) =>
      (parseBatch(body).history?.append ?? []).flatMap((m) =>
        m.role === 'tool' ? [m.content] : [],
      ),
    )
    // Batches 19–32: the checkpoint after batch 32 is the first this code writes.
    await continueWithToolTurns(store, sessionId, 10, 16)
    const root = `t1/default/.vtcode/sessions/${sessionId}/`
    const checkpoint = JSON.parse(decode((await store.get(`${root}state/0000000032.json`))?.body))
    expect(checkpoint).toMatchObject({ version: 4, history_from: { checkpoint: 16, batch: 17 } })
    expect(checkpoint).not.toHaveProperty('history')

    const cold = await coldTurn(store, sessionId, 17)
    const { request } = cold
    for (const output of outputs) expect(request).toContain(JSON.stringify(output))
    for (let n = 10; n <= 16; n++)
      expect(request).toContain(`answer of turn ${n} ${'z'.repeat(200)}`)
    await expectFilesMatchLog(store, cold.service, sessionId, 'past the checkpoint')
  })
})
