import { describe, expect, it } from 'vitest'
import { lambdaDeadline } from '../support/lambda-deadline.ts'
import { parseSse } from '../support/sse-frames.ts'

/**
 * A turn run in the request on Lambda and the function's timeout. The bundle's `index.handler`
 * (S3 on moto, Upstash), invoked with a context whose `getRemainingTimeInMillis()` the test
 * plays: the time left drops while the model answers, as if the turn had run long. The turn must
 * stop before the platform would end the invocation — between steps, or by stopping a model
 * answer under way — commit what it did, answer `waiting` with a `paused:` notice, and continue
 * at the next call without running anything twice; a request with too little time left for a
 * turn is refused before anything is written.
 */
const { clock, mock, call, newSession, model, storedEvents } = lambdaDeadline('lambda-deadline')

describe('Lambda: a turn run in the request and the function timeout', () => {
  it('pauses before a tool round it has no time for; the next call runs the round once and ends the turn', async () => {
    const id = await newSession()
    model(
      {
        // The model took long: 30 s are left once it has answered.
        step: { toolCalls: [{ id: 'c1', name: 'no_such_tool', arguments: '{}' }] },
        onAsked: () => {
          clock.left = 30_000
        },
      },
      { step: { text: 'Done.' } },
    )
    const first = await call(
      'POST',
      `/v1/sessions/${id}/turns`,
      { input: 'go' },
      {
        accept: 'text/event-stream',
      },
    )
    expect(first.status).toBe(200)
    const frames = parseSse(first.text).frames
    const result = JSON.parse(frames.at(-1)?.data ?? '{}') as {
      status: string
      warnings: string[]
    }
    expect(frames.at(-1)?.event).toBe('turn.result')
    expect(result.status).toBe('waiting')
    expect(result.warnings.join('\n')).toContain("paused: the request's time runs out in 30 s")
    // Committed before the answer: the round's call is recorded, not run.
    let events = await storedEvents(id)
    expect(events.map((e) => e.type)).not.toContain('turn.completed')
    expect(events.filter((e) => e.item?.type === 'tool_output')).toHaveLength(0)

    clock.left = 300_000
    const second = await call('POST', `/v1/sessions/${id}/turns`, {})
    expect(second.status).toBe(200)
    expect(JSON.parse(second.text)).toMatchObject({ status: 'completed' })
    events = await storedEvents(id)
    expect(events.filter((e) => e.type === 'turn.started')).toHaveLength(1)
    expect(events.filter((e) => e.type === 'turn.completed')).toHaveLength(1)
    expect(
      events.filter((e) => e.type === 'item.completed' && e.item?.type === 'tool_output'),
    ).toHaveLength(1)
    expect(mock().requests).toHaveLength(2)
  }, 60_000)

  it('stops a model answer still streaming 10 s before the timeout; the next call asks again', async () => {
    const id = await newSession()
    model(
      {
        // A 20 s answer, 500 ms a frame; 8 s are left as it starts.
        step: { text: 'word '.repeat(40), chunkSize: 5, frameDelayMs: 500 },
        onAsked: () => {
          clock.left = 8_000
        },
      },
      { step: { text: 'Done.' } },
    )
    const first = await call('POST', `/v1/sessions/${id}/turns`, { input: 'go' })
    expect(first.status).toBe(200)
    const answer = JSON.parse(first.text) as { status: string; warnings: string[] }
    expect(answer.status).toBe('waiting')
    expect(answer.warnings.join('\n')).toContain('ran out while the model answered')
    expect(first.endedAt).toBeLessThan(10_000)

    clock.left = 300_000
    const second = await call('POST', `/v1/sessions/${id}/turns`, {})
    expect(JSON.parse(second.text)).toMatchObject({ status: 'completed' })
    const events = await storedEvents(id)
    expect(events.filter((e) => e.type === 'turn.completed')).toHaveLength(1)
    expect(mock().requests).toHaveLength(2)
  }, 60_000)

  it('refuses a turn with less than 90 s left, naming respond-async, and writes nothing', async () => {
    const id = await newSession()
    clock.left = 50_000
    const refused = await call('POST', `/v1/sessions/${id}/turns`, { input: 'go' })
    expect(refused.status).toBe(400)
    expect(refused.text).toContain('Prefer: respond-async')
    expect(mock().requests).toHaveLength(0)
    clock.left = 300_000
    expect((await storedEvents(id)).map((e) => e.type)).toEqual(['thread.started'])
  }, 60_000)

  it('charges the tenant its estimate for a model answer stopped at the deadline, not nothing', async () => {
    const id = await newSession()
    const usage = async () =>
      (
        JSON.parse((await call('GET', '/v1/usage')).text) as {
          tokens: { used: number; reserved: number }
        }
      ).tokens
    const before = await usage()
    model({
      step: { text: 'word '.repeat(40), chunkSize: 5, frameDelayMs: 500 },
      onAsked: () => {
        clock.left = 8_000
      },
    })
    const first = await call('POST', `/v1/sessions/${id}/turns`, { input: 'go' })
    expect(JSON.parse(first.text)).toMatchObject({ status: 'waiting' })
    clock.left = 300_000
    // The provider may bill the answer it was streaming: its hold is charged, not dropped.
    const after = await usage()
    expect(after.reserved).toBe(0)
    expect(after.used - before.used).toBeGreaterThan(0)
  }, 60_000)
})
