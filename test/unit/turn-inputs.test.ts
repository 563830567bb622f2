import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { parseBatch, serializeBatch } from '../../src/contract/batch.ts'
import { parseCheckpoint, serializeCheckpoint } from '../../src/contract/checkpoint.ts'
import {
  parseSessionManifest,
  serializeSessionManifest,
} from '../../src/contract/session-manifest.ts'
import { readableTurnInput, titleOf } from '../../src/contract/turn-input-record.ts'
import { SessionKeys } from '../../src/store/session-ref.ts'
import { readTurnInputs } from '../../src/store/turn-inputs.ts'
import { useScriptedEngine } from '../support/scripted-engine.ts'

const fixture = useScriptedEngine()
const stored = (name: string) =>
  readFileSync(new URL(`../fixtures/store/turn-input/${name}`, import.meta.url), 'utf8')
const PNG = 'data:image/png;base64,iVBORw0KGgo='

/** Each turn's input on the record: GET /v1/sessions/{id}/turns, and the session's title. */
describe('turn inputs on the record', () => {
  it('lists every turn with what it was asked: text, follow-ups, image parts; nothing leaks into the events', async () => {
    const { service, model } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    model.enqueue({ text: 'one' })
    const first = await service.stepTurn('t1', session_id, {
      input: '  Fix   the\nlogin bug  ',
    })
    await service.enqueueIntent('t1', session_id, { text: 'also check the tests' })
    model.enqueue({ text: 'two' })
    await service.stepTurn('t1', session_id, { input: 'go on' })
    model.enqueue({ text: 'three' })
    await service.stepTurn('t1', session_id, {
      input: [
        { type: 'input_text', text: 'what is this?' },
        { type: 'input_image', image_url: PNG, detail: 'low' },
      ],
    })

    const page = await service.listTurns('t1', session_id, { limit: 50 })
    expect(page.cursor).toBeUndefined()
    expect(page.turns.map(({ started_at: _, ...turn }) => turn)).toEqual([
      { turn_id: 'turn-1', seq: 1, input: { input: '  Fix   the\nlogin bug  ' } },
      {
        turn_id: 'turn-2',
        seq: expect.any(Number),
        input: {
          input: 'go on',
          follow_ups: [{ intent_id: expect.any(String), text: 'also check the tests' }],
        },
      },
      {
        turn_id: 'turn-3',
        seq: expect.any(Number),
        input: {
          input: [
            { type: 'input_text', text: 'what is this?' },
            { type: 'input_image', image_url: PNG, detail: 'low' },
          ],
        },
      },
    ])
    // each seq is the turn's turn.started
    const { events } = await service.readEvents('t1', session_id, -1, 1000)
    for (const turn of page.turns) {
      expect(events.find((e) => e.seq === turn.seq)?.line.event.type).toBe('turn.started')
    }
    // VT Code's events are unchanged: no user text in any of them
    expect(JSON.stringify(events)).not.toContain('login bug')
    expect(first.events[0]).toEqual({ type: 'turn.started' })

    // the title: the first input, white space collapsed
    const view = await service.getSession('t1', session_id)
    expect(view.title).toBe('Fix the login bug')
    const listed = await service.listSessions('t1', {
      workspace: 'default',
      order: 'newest',
      limit: 50,
    })
    expect(listed.sessions.find((s) => s.session_id === session_id)?.title).toBe(
      'Fix the login bug',
    )
    // another tenant sees nothing
    await expect(service.listTurns('t2', session_id, { limit: 50 })).rejects.toMatchObject({
      code: 'not_found',
    })
  })

  it('pages through the turns with a cursor, none lost or repeated; a forged cursor is 400', async () => {
    const { service, model } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    for (let i = 1; i <= 5; i++) {
      model.enqueue({ text: `answer ${i}` })
      await service.stepTurn('t1', session_id, { input: `question ${i}` })
    }
    const seen: string[] = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = await service.listTurns('t1', session_id, {
        limit: 2,
        ...(cursor ? { cursor } : {}),
      })
      seen.push(...page.turns.map((turn) => String(turn.input?.input)))
      cursor = page.cursor
      pages += 1
    } while (cursor !== undefined && pages < 10)
    expect(seen).toEqual(['question 1', 'question 2', 'question 3', 'question 4', 'question 5'])
    await expect(
      service.listTurns('t1', session_id, { limit: 2, cursor: 'x' }),
    ).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('a session whose first turn had no text has no title until one does', async () => {
    const { service, model } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    model.enqueue({ text: 'an image' })
    await service.stepTurn('t1', session_id, { input: [{ type: 'input_image', image_url: PNG }] })
    expect((await service.getSession('t1', session_id)).title).toBeUndefined()
    model.enqueue({ text: 'ok' })
    await service.stepTurn('t1', session_id, { input: 'x'.repeat(300) })
    const title = (await service.getSession('t1', session_id)).title
    expect(title).toBe(`${'x'.repeat(119)}…`)
  })

  it('a record of a newer version is kept and listed without its input; titles count characters', () => {
    const batch = parseBatch(
      JSON.stringify({
        format: 'turnline.batch',
        version: 2,
        batch: 1,
        first_seq: 1,
        events: [{ schema_version: '0.11.0', event: { type: 'turn.started' } }],
        committed_at: '2026-01-01T00:00:00Z',
        turn_id: 'turn-1',
        turn_input: { version: 5, prompt: { what: 'new' } },
      }),
    )
    expect(batch.turn_input).toEqual({ version: 5, prompt: { what: 'new' } })
    expect(readableTurnInput(batch.turn_input)).toBeUndefined()
    expect(titleOf({ version: 1, input: '😀'.repeat(121) })).toBe(`${'😀'.repeat(119)}…`)
    expect(titleOf({ version: 1, follow_ups: [{ intent_id: 'i', text: ' queued ' }] })).toBe(
      'queued',
    )
  })
})

describe('stored turn inputs (read-only fixtures)', () => {
  it('a batch with a version 1 record (follow-up, text and image parts) reads and re-serializes byte for byte', () => {
    const source = stored('batch.json')
    const batch = parseBatch(source)
    expect(batch.turn_input).toEqual({
      version: 1,
      input: [
        { type: 'input_text', text: 'What is in this picture?' },
        { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' },
      ],
      follow_ups: [{ intent_id: '5b0e9a52-3c1e-4f7e-9a43-0d6f1c2b7e11', text: 'Keep it short.' }],
    })
    expect(serializeBatch(batch)).toBe(source)
    expect(batch.turn_input && titleOf(batch.turn_input as never)).toBe('What is in this picture?')
  })

  it('a batch with a version 3 record (a text kept as an artifact) reads, re-serializes byte for byte and lists its preview and artifact', async () => {
    const source = stored('batch-v3.json')
    const batch = parseBatch(source)
    expect(serializeBatch(batch)).toBe(source)
    const record = readableTurnInput(batch.turn_input)
    if (record?.version !== 3) throw new Error('not a version 3 record')
    expect(record.input_artifacts).toEqual([
      { artifact_id: 'out_46d86b4f110e38fb3f4bbf65ed918223', size: 90_000, lines: 3000 },
    ])
    const [question, log] = (record.input ?? []) as { type: string; text: string }[]
    expect(question?.text).toBe('Which requests failed in this log?')
    expect(log?.text).toContain(
      '[input of 90,000 bytes (3,000 lines) kept whole as artifact out_46d86b4f110e38fb3f4bbf65ed918223;',
    )
    expect(titleOf(record)).toBe(
      'Which requests failed in this log? 0001 GET /api/orders 200 12ms 0002 GET /api/orders 200 12ms 0003 GET /api/orders 200…',
    )
    // the listing shows the preview and names the artifact
    const store = new MemoryObjectStore()
    const keys = new SessionKeys('', { tenant: 'acme', workspace: 'default', sessionId: 's1' })
    await store.put(keys.batch(1), new TextEncoder().encode(source))
    const page = await readTurnInputs(store, keys, 1, { cursor: '0', limit: 10 })
    expect(page.turns[0]?.input).toEqual({
      input: record.input,
      input_artifacts: record.input_artifacts,
    })
  })

  it('a batch with a version 4 record (a follow-up kept as an artifact) reads, re-serializes byte for byte and lists its preview and artifact', async () => {
    const source = stored('batch-v4.json')
    const batch = parseBatch(source)
    expect(serializeBatch(batch)).toBe(source)
    const record = readableTurnInput(batch.turn_input)
    if (record?.version !== 4) throw new Error('not a version 4 record')
    expect(record.input).toBeUndefined()
    const [long, short] = record.follow_ups ?? []
    expect(long?.input_artifacts).toEqual([
      { artifact_id: 'out_18bc9620417b56732a98256df25e4681', size: 90_036, lines: 3002 },
    ])
    expect(long?.text).toContain(
      '[input of 90,036 bytes (3,002 lines) kept whole as artifact out_18bc9620417b56732a98256df25e4681;',
    )
    expect(short).toEqual({
      intent_id: 'd908d60b-0f05-48ff-9413-e0ff114e00e9',
      text: 'Then count them.',
    })
    expect(titleOf(record)).toMatch(/^Which requests failed in this log\? 0001 GET/)
    // the transcript holds the preview, tagged with the follow-up's id
    const appended = batch.history?.append ?? []
    expect(
      appended.find((m) => m.role === 'user' && m.intent_id === long?.intent_id),
    ).toMatchObject({
      content: long?.text,
    })
    const store = new MemoryObjectStore()
    const keys = new SessionKeys('', { tenant: 'acme', workspace: 'default', sessionId: 's1' })
    await store.put(keys.batch(1), new TextEncoder().encode(source))
    const page = await readTurnInputs(store, keys, 1, { cursor: '0', limit: 10 })
    expect(page.turns[0]?.input).toEqual({ follow_ups: record.follow_ups })
  })

  it('a manifest and a checkpoint with a title read and re-serialize byte for byte', () => {
    const manifest = stored('manifest.json')
    expect(parseSessionManifest(manifest).title).toBe('What is in this picture?')
    expect(serializeSessionManifest(parseSessionManifest(manifest))).toBe(manifest)
    const checkpoint = stored('checkpoint.json')
    expect(parseCheckpoint(checkpoint).title).toBe('What is in this picture?')
    expect(serializeCheckpoint(parseCheckpoint(checkpoint))).toBe(checkpoint)
  })

  it('a record that is not an object, or a version 1 record of the wrong shape, is corrupt data', () => {
    const doc = JSON.parse(stored('batch.json'))
    expect(() => parseBatch(JSON.stringify({ ...doc, turn_input: 'hello' }))).toThrow(/batch/)
    expect(() =>
      parseBatch(JSON.stringify({ ...doc, turn_input: { version: 1, input: 42 } })),
    ).toThrow(/batch/)
  })
})
