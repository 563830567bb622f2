import { describe, expect, it, onTestFinished, vi } from 'vitest'
import { parseStoredBatch } from '../../src/contract/batch-encoding.ts'
import { listAll } from '../../src/store/list-all.ts'
import { scriptAgent } from '../support/compaction-engine.ts'
import { TOOL_SECRET } from '../support/engine-deps.ts'
import { gate } from '../support/gate.ts'
import { inProcessHookReceiver } from '../support/hook-receiver.ts'
import { useScriptedEngine } from '../support/scripted-engine.ts'

/**
 * `pre_compact` hooks run before the compaction boundary is recorded, with VT Code's payload;
 * the matcher compares against the trigger; a failing hook is a warning, never a lost compaction.
 */
const receiver = inProcessHookReceiver(TOOL_SECRET)
const fixture = useScriptedEngine({ hooks: receiver })

async function boundariesCommitted(sid: string): Promise<number> {
  const { objects } = await listAll(fixture.engine.store, `t1/default/.vtcode/sessions/${sid}/log/`)
  let count = 0
  for (const { key } of objects) {
    const batch = await parseStoredBatch(
      (await fixture.engine.store.get(key))?.body ?? new Uint8Array(),
    )
    count += batch.events.filter((l) => l.event.type === 'thread.compact_boundary').length
  }
  return count
}

describe('pre_compact hooks', () => {
  it('receive the payload before the boundary is committed; the matcher selects the trigger', async () => {
    const { service, model } = fixture.engine
    const { session_id: sid } = await service.createSession('t1', {
      hooks: [
        { event: 'pre_compact', type: 'http', url: receiver.url('/manual'), matcher: 'manual' },
        { event: 'pre_compact', type: 'http', url: receiver.url('/auto'), matcher: 'auto' },
      ],
    })
    scriptAgent(model, [{ text: 'a1' }, { text: 'a2' }])
    await service.stepTurn('t1', sid, { input: 'q1' })
    await service.stepTurn('t1', sid, { input: 'q2' })

    // The hook is answered only after the test has looked: nothing is committed before it.
    const answer = gate()
    onTestFinished(answer.open)
    receiver.setReply(() => ({ body: '{}', hold: answer.promise }))
    const compacting = service.compact('t1', sid)
    await vi.waitFor(() => expect(receiver.received.length).toBeGreaterThan(0), {
      timeout: 8_000,
    })
    expect(await boundariesCommitted(sid)).toBe(0)
    answer.open()
    const response = await compacting
    expect(await boundariesCommitted(sid)).toBe(1)

    expect(receiver.received.map((h) => h.path)).toEqual(['/manual'])
    const [boundary] = response.events
    expect(receiver.received[0]?.body).toEqual({
      session_id: sid,
      cwd: 't1/default',
      hook_event_name: 'PreCompact',
      transcript_path: `t1/default/.vtcode/sessions/${sid}/events.jsonl`,
      trigger: 'manual',
      mode: 'local',
      original_message_count: 4,
      compacted_message_count: 3, // envelope, summary, the first question: never grows the request
      history_artifact_path:
        boundary?.type === 'thread.compact_boundary' ? boundary.history_artifact_path : 'missing',
    })
    expect(receiver.received[0]?.signatureValid).toBe(true)
  })

  it('records a failing hook as a warning and compacts anyway', async () => {
    const { service, model } = fixture.engine
    const { session_id: sid } = await service.createSession('t1', {
      hooks: [{ event: 'pre_compact', type: 'http', url: receiver.url('/down') }],
    })
    scriptAgent(model, [{ text: 'a1' }])
    await service.stepTurn('t1', sid, { input: 'q1' })
    receiver.setReply(() => ({ status: 500, body: 'down' }))
    const response = await service.compact('t1', sid)
    expect(response.events.map((e) => e.type)).toEqual(['thread.compact_boundary'])
    expect(response.warnings).toEqual([
      expect.stringMatching(/^pre_compact hook pre_compact#0 failed/),
    ])
  })
})
