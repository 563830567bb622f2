import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import {
  CallbackNoticeSchema,
  parseCallbackBatch,
  parseCallbackDelivery,
  serializeCallbackBatch,
  serializeCallbackDelivery,
} from '../../src/contract/callback-delivery.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import {
  callbackMessageId,
  callbackNotices,
  workMessageId,
} from '../../src/core/callbacks/callback-notices.ts'
import { assertCallbackAllowed } from '../../src/core/callbacks/callback-policy.ts'

const usage = {
  input_tokens: 10,
  cached_input_tokens: 0,
  cache_creation_tokens: 0,
  output_tokens: 3,
}
const batch = (events: ThreadEvent[], state: Record<string, unknown> = {}) => ({
  sessionId: 'ses_1',
  turnId: 'turn_3',
  firstSeq: 20,
  events,
  state,
  committedAt: '2026-12-05T03:00:00.000Z',
})
const item = { type: 'item.completed', item: { id: 'item_1', type: 'agent_message', text: 'hi' } }
const types = (events: ThreadEvent[], state?: Record<string, unknown>) =>
  callbackNotices(batch(events, state), '/e').map((d) => d.type)

describe('callback notices of a batch', () => {
  it('reports a completed turn with its usage, result and cost', () => {
    const [draft] = callbackNotices(
      batch([item as ThreadEvent, { type: 'turn.completed', usage }], {
        last_assistant_text: 'hi',
        cost_usd: 0.5,
      }),
      '/v1/sessions/ses_1/events',
    )
    expect(draft?.notice).toEqual({
      type: 'turn.completed',
      timestamp: '2026-12-05T03:00:00.000Z',
      data: {
        session_id: 'ses_1',
        turn_id: 'turn_3',
        seq: 21,
        events_url: '/v1/sessions/ses_1/events',
        cost_usd: 0.5,
        status: 'completed',
        usage,
        result: 'hi',
      },
    })
    expect(CallbackNoticeSchema.parse(draft?.notice)).toEqual(draft?.notice)
  })

  it('reports a failed turn, and a thread that ends in the same batch after it', () => {
    const ended = {
      type: 'thread.completed',
      thread_id: 't',
      session_id: 'ses_1',
      subtype: 'error_during_execution',
      outcome_code: 'failed',
      usage,
    } as ThreadEvent
    const drafts = callbackNotices(batch([{ type: 'turn.failed', message: 'boom' }, ended]), '/e')
    expect(drafts.map((d) => [d.type, d.notice.data.status, d.notice.data.seq])).toEqual([
      ['turn.failed', 'terminal', 20],
      ['thread.completed', 'terminal', 21],
    ])
    expect(drafts[0]?.notice.data.message).toBe('boom')
  })

  it('reports a turn waiting for a person, never one waiting on a running command', () => {
    const open = { turn_id: 'turn_3', pending_calls: [], usage, tool_loops: 1 }
    expect(
      types([item as ThreadEvent], { open_turn: { ...open, pending_permission: {} } }),
    ).toEqual(['turn.waiting'])
    const [approval] = callbackNotices(
      batch([item as ThreadEvent], { open_turn: { ...open, pending_permission: {} } }),
      '/e',
    )
    expect(approval?.notice.data).toMatchObject({
      status: 'awaiting_approval',
      waiting_for: 'approval',
      seq: 20,
    })
    expect(types([item as ThreadEvent], { plan_approval: { turn_id: 't', plan: 'p' } })).toEqual([
      'turn.waiting',
    ])
    // A turn that completed proposing a plan answers awaiting_approval: so does its notice.
    const planned = callbackNotices(
      batch([{ type: 'turn.completed', usage } as ThreadEvent], {
        plan_approval: { turn_id: 't', plan: 'p' },
        last_assistant_text: 'the plan',
      }),
      '/e',
    )
    expect(planned.map((d) => [d.type, d.notice.data])).toEqual([
      [
        'turn.waiting',
        expect.objectContaining({
          status: 'awaiting_approval',
          waiting_for: 'plan_approval',
          result: 'the plan',
          usage,
        }),
      ],
    ])
    const decided = callbackNotices(batch([item as ThreadEvent], { open_turn: open }), '/e')
    expect(decided[0]?.notice.data).toMatchObject({ status: 'waiting', waiting_for: 'continue' })
    const command = { ...open, waiting: { item_id: 'item_1', resume: {} } }
    expect(types([item as ThreadEvent], { open_turn: command })).toEqual([])
    expect(types([item as ThreadEvent], { open_turn: null })).toEqual([])
  })

  it('names each notice by tenant, session, batch and type: the same id whoever records it', async () => {
    const id = await callbackMessageId('acme', 'ses_1', 4, 'turn.completed')
    expect(id).toMatch(/^msg_[0-9a-f]{32}$/)
    expect(await callbackMessageId('acme', 'ses_1', 4, 'turn.completed')).toBe(id)
    expect(await callbackMessageId('acme', 'ses_1', 5, 'turn.completed')).not.toBe(id)
    expect(await callbackMessageId('other', 'ses_1', 4, 'turn.completed')).not.toBe(id)
    const work = 'a'.repeat(32)
    const workId = await workMessageId('acme', 'ses_1', work, 'work.failed')
    expect(workId).toMatch(/^msg_[0-9a-f]{32}$/)
    expect(await workMessageId('acme', 'ses_1', work, 'work.failed')).toBe(workId)
    expect(await workMessageId('acme', 'ses_1', 'b'.repeat(32), 'work.failed')).not.toBe(workId)
  })

  it('refuses an http callback unless the operator allows http', () => {
    const refused = (() => {
      try {
        assertCallbackAllowed({ allowHttp: false }, { url: 'http://hooks.example.com/x' })
      } catch (error) {
        return error
      }
    })()
    expect(isTurnlineError(refused, 'invalid_input')).toBe(true)
    expect(String(refused)).toMatch(/must use https .*TURNLINE_CALLBACK_ALLOW_HTTP/)
    assertCallbackAllowed({ allowHttp: true }, { url: 'http://hooks.example.com/x' })
    assertCallbackAllowed({ allowHttp: false }, { url: 'https://hooks.example.com/x' })
  })
})

describe('stored callback formats (read-only fixtures)', () => {
  const text = (path: string) =>
    readFileSync(new URL(`../fixtures/store/callbacks/${path}`, import.meta.url), 'utf8')
  const failsWith = (code: string, run: () => unknown) => {
    let caught: unknown
    try {
      run()
    } catch (error) {
      caught = error
    }
    expect(isTurnlineError(caught, code as never)).toBe(true)
  }

  it('callbacks/<batch>-<type>.json', () => {
    const stored = text('0000000002-turn.completed.json')
    const record = parseCallbackDelivery(stored)
    expect(record).toMatchObject({ version: 1, state: 'delivered', batch: 2 })
    expect(CallbackNoticeSchema.parse(JSON.parse(record.body)).data.result).toContain('\n')
    expect(serializeCallbackDelivery(record)).toBe(stored)
    const doc = JSON.parse(stored) as Record<string, unknown>
    failsWith('unsupported_version', () =>
      parseCallbackDelivery(JSON.stringify({ ...doc, version: 2 })),
    )
    failsWith('corrupt_data', () => parseCallbackDelivery(JSON.stringify({ ...doc, id: 'x' })))
  })

  it("callbacks/work-<work_id>-work.failed.json and its marker: one work's notice", async () => {
    const work = '3f9a0c1b2d4e5f60718293a4b5c6d7e8'
    const stored = text(`work-${work}-work.failed.json`)
    const record = parseCallbackDelivery(stored)
    expect(record).toMatchObject({ type: 'work.failed', work_id: work, state: 'pending' })
    expect(record.id).toBe(
      await workMessageId('acme', 'ses_20261205T030000Z_4f2a', work, 'work.failed'),
    )
    const notice = CallbackNoticeSchema.parse(JSON.parse(record.body))
    expect(notice.data.work).toMatchObject({ work_id: work, code: 'quota_exceeded' })
    expect(serializeCallbackDelivery(record)).toBe(stored)
    const markerText = text(`marker-work-${work}.json`)
    const marker = parseCallbackBatch(markerText)
    expect(marker).toMatchObject({ work_id: work, batch: 4 })
    expect(serializeCallbackBatch(marker)).toBe(markerText)
    const doc = JSON.parse(markerText) as Record<string, unknown>
    failsWith('corrupt_data', () => parseCallbackBatch(JSON.stringify({ ...doc, work_id: 'x' })))
  })

  it('the batch marker', () => {
    const stored = text('marker-0000000002.json')
    const marker = parseCallbackBatch(stored)
    expect(marker).toMatchObject({ tenant: 'acme', batch: 2 })
    expect(serializeCallbackBatch(marker)).toBe(stored)
    const doc = JSON.parse(stored) as Record<string, unknown>
    failsWith('corrupt_data', () => parseCallbackBatch(JSON.stringify({ ...doc, format: 'other' })))
  })
})
