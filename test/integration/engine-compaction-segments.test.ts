import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import type { RequestSegment } from '../../src/contract/request-segment.ts'
import {
  assertNoOrphansInRequests,
  boundaries,
  committed,
  isSummaryRequest,
  scriptAgent,
} from '../support/compaction-engine.ts'
import { useEngine } from '../support/engine-fixture.ts'
import { echoTool } from '../support/engine-harness.ts'
import { attachRunner } from '../support/sandbox-engine.ts'

/**
 * Request segments: ordinary turns only append (same segment, same hashes); a tool catalog change
 * (the sandbox's built-in tools
 * joining) opens the next segment with a new catalog hash and no boundary event; a model switch compacts
 * (trigger `model_switch`) when the history is long enough, else only opens a segment.
 */
const fixture = useEngine()
beforeEach(() => {
  fixture.engine.deps.defaults.model = 'gpt-4o-mini'
  delete fixture.engine.deps.sandbox
})

async function segmentOf(sid: string): Promise<RequestSegment | undefined> {
  return (await committed(fixture.engine.deps, 't1', sid)).state.compaction?.segment
}

describe('request segments', () => {
  it('keeps one segment across ordinary turns and opens one when the tool catalog changes', async () => {
    const { service, mock, receiver, deps } = fixture.engine
    const { session_id: sid } = await service.createSession('t1', {
      instructions: 'Be brief.',
      tools: [echoTool(receiver.url)],
    })
    const script = scriptAgent(mock, [{ text: 'a1' }, { text: 'a2' }, { text: 'a3' }])
    await service.stepTurn('t1', sid, { input: 'one' })
    const first = await segmentOf(sid)
    expect(first).toMatchObject({ id: 'segment-00000001', model: 'gpt-4o-mini', mode: 'auto' })
    await service.stepTurn('t1', sid, { input: 'two' })
    expect(await segmentOf(sid)).toEqual(first)

    // The sandbox's built-in tools join the catalog (a real runner; no tool is called).
    const root = await mkdtemp(path.join(tmpdir(), 'turnline-segments-'))
    const runner = await attachRunner(fixture.engine, { root, secret: 'runner-secret-0123456789' })
    const turn = await service.stepTurn('t1', sid, { input: 'three' }).finally(async () => {
      await runner.stop()
      await rm(root, { recursive: true, force: true })
    })
    expect(boundaries(turn.events)).toEqual([])
    const second = await segmentOf(sid)
    expect(second?.id).toBe('segment-00000002')
    expect(second?.prefix_hash).toBe(first?.prefix_hash)
    expect(second?.instruction_digest).toBe(first?.instruction_digest)
    expect(second?.catalog_hash).not.toBe(first?.catalog_hash)
    // The transcript was not touched: a catalog change only changes the segment.
    expect((await committed(deps, 't1', sid)).history).toHaveLength(6)
    expect(script.summaries).toBe(0)
  })

  it('compacts on a model switch once the history is long, and only opens a segment before', async () => {
    const { service, mock, deps } = fixture.engine
    const { session_id: sid } = await service.createSession('t1', { instructions: 'Be brief.' })
    const script = scriptAgent(
      mock,
      Array.from({ length: 8 }, (_, i) => ({ text: `answer ${i + 1}` })),
    )
    await service.stepTurn('t1', sid, { input: 'q1' })
    deps.defaults.model = 'gpt-4o'
    const short = await service.stepTurn('t1', sid, { input: 'q2' })
    expect(boundaries(short.events)).toEqual([])
    expect(await segmentOf(sid)).toMatchObject({ id: 'segment-00000002', model: 'gpt-4o' })
    expect(script.summaries).toBe(0)

    for (let n = 3; n <= 6; n++) await service.stepTurn('t1', sid, { input: `q${n}` })
    expect(await segmentOf(sid)).toMatchObject({ id: 'segment-00000002' })
    deps.defaults.model = 'gpt-4.1-mini'
    const before = await segmentOf(sid)
    const switched = await service.stepTurn('t1', sid, { input: 'q7' })
    expect(switched.status).toBe('completed')
    expect(boundaries(switched.events)).toEqual([
      expect.objectContaining({
        trigger: 'model_switch',
        original_message_count: 13,
        previous_segment_id: 'segment-00000002',
        new_segment_id: 'segment-00000003',
        previous_prefix_hash: before?.prefix_hash,
        new_prefix_hash: before?.prefix_hash,
      }),
    ])
    expect(script.summaries).toBe(1)
    // The summary was asked of the new model.
    const summary = mock.requests.find(isSummaryRequest)
    expect(summary?.body.model).toBe('gpt-4.1-mini')
    expect(await segmentOf(sid)).toMatchObject({ id: 'segment-00000003', model: 'gpt-4.1-mini' })
    assertNoOrphansInRequests(mock.requests)
    expect(script.unexpected).toEqual([])
  })
})
