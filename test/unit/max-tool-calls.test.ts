import { describe, expect, it } from 'vitest'
import { parseStoredBatch } from '../../src/contract/batch-encoding.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { listAll } from '../../src/store/list-all.ts'
import { echoTool } from '../support/engine-deps.ts'
import { useScriptedEngine } from '../support/scripted-engine.ts'

/**
 * `harness.max_tool_calls` through the real turn engine: at most that many server-run calls run
 * in a turn; after them the model is offered no tool (`tool_choice: none`), a call it still makes
 * is answered "not run", and the turn completes with the model's answer.
 */
const fixture = useScriptedEngine()

const lookup = (id: string, q: string) => ({ id, name: 'lookup', arguments: JSON.stringify({ q }) })

const invocations = (events: ThreadEvent[]) =>
  events.flatMap((e) =>
    e.type === 'item.completed' && e.item.type === 'tool_invocation' ? [e.item] : [],
  )

/** Whether any batch the session committed stored the turn's count of calls run. */
async function countStored(sid: string): Promise<boolean> {
  const { store } = fixture.engine
  const { objects } = await listAll(store, `t1/default/.vtcode/sessions/${sid}/log/`)
  expect(objects.length).toBeGreaterThan(0)
  for (const { key } of objects) {
    const batch = await parseStoredBatch((await store.get(key))?.body ?? new Uint8Array())
    if (JSON.stringify(batch.state ?? {}).includes('"tool_calls_run"')) return true
  }
  return false
}

async function session(harness: Record<string, unknown>) {
  const { service, receiver } = fixture.engine
  const created = await service.createSession('t1', { tools: [echoTool(receiver.url)], harness })
  return created.session_id
}

describe('harness.max_tool_calls', () => {
  it('1: the model calls a tool once, then answers under tool_choice none; the turn completes', async () => {
    const { service, model, receiver } = fixture.engine
    const id = await session({ max_tool_calls: 1 })
    model.enqueue({ toolCalls: [lookup('call_1', 'a')] }, { text: 'Found a.' })
    const turn = await service.stepTurn('t1', id, { input: 'Look a up.' })
    expect(turn.status).toBe('completed')
    expect(turn.events.at(-1)?.type).toBe('turn.completed')
    expect(await countStored(id)).toBe(true)
    expect(receiver.calls).toHaveLength(1)
    expect(model.requests[0]?.toolChoice).toBeUndefined()
    expect(model.requests[1]?.toolChoice).toBe('none')
    // Every tool is still defined (a provider reading the call in the transcript wants it).
    expect(model.requests[1]?.tools?.map((t) => t.name)).toContain('lookup')
  })

  it('a call past the limit is not run: its result says why, the next request offers none', async () => {
    const { service, model, receiver } = fixture.engine
    const id = await session({ max_tool_calls: 1 })
    model.enqueue(
      { toolCalls: [lookup('call_1', 'a')] },
      { toolCalls: [lookup('call_2', 'b')] },
      { text: 'Only a.' },
    )
    const turn = await service.stepTurn('t1', id, { input: 'Look a and b up.' })
    expect(turn.status).toBe('completed')
    expect(receiver.calls.map((c) => (c.body as { arguments: unknown }).arguments)).toEqual([
      { q: 'a' },
    ])
    expect(invocations(turn.events).map((item) => [item.tool_call_id, item.outcome])).toEqual([
      ['call_1', 'success'],
      ['call_2', 'cancelled'],
    ])
    const last = model.requests[2]?.messages.at(-1)
    expect(last).toEqual({
      role: 'tool',
      tool_call_id: 'call_2',
      content:
        'not run: max_tool_calls 1 was reached in this turn; no more tool calls are run, answer with what you have',
    })
    expect(model.requests.map((r) => r.toolChoice)).toEqual([undefined, 'none', 'none'])
    expect(turn.events.at(-2)).toMatchObject({
      type: 'item.completed',
      item: { type: 'agent_message', text: 'Only a.' },
    })
  })

  it('counts calls, not rounds: of three in one round with max 2, two run', async () => {
    const { service, model, receiver } = fixture.engine
    const id = await session({ max_tool_calls: 2 })
    model.enqueue(
      { toolCalls: [lookup('call_1', 'a'), lookup('call_2', 'b'), lookup('call_3', 'c')] },
      { text: 'Two of three.' },
    )
    const turn = await service.stepTurn('t1', id, { input: 'Look a, b and c up.' })
    expect(turn.status).toBe('completed')
    expect(receiver.calls).toHaveLength(2)
    expect(invocations(turn.events).map((item) => item.outcome)).toEqual([
      'success',
      'success',
      'cancelled',
    ])
    expect(model.requests[1]?.toolChoice).toBe('none')
  })

  it('counts each turn afresh; absent, no limit applies and harness.max_tool_loops is unchanged', async () => {
    const { service, model, receiver } = fixture.engine
    const id = await session({ max_tool_calls: 1 })
    model.enqueue({ toolCalls: [lookup('call_1', 'a')] }, { text: 'a.' })
    await service.stepTurn('t1', id, { input: 'a?' })
    model.enqueue({ toolCalls: [lookup('call_2', 'b')] }, { text: 'b.' })
    const second = await service.stepTurn('t1', id, { input: 'b?' })
    expect(second.status).toBe('completed')
    expect(receiver.calls).toHaveLength(2)
    expect(model.requests.map((r) => r.toolChoice)).toEqual([undefined, 'none', undefined, 'none'])

    model.reset()
    receiver.calls.length = 0
    const free = await session({ max_tool_loops: 2 })
    model.enqueue(
      { toolCalls: [lookup('call_1', 'a'), lookup('call_2', 'b')] },
      { toolCalls: [lookup('call_3', 'c')] },
    )
    const looped = await service.stepTurn('t1', free, { input: 'a, b, c?' })
    expect(receiver.calls).toHaveLength(3)
    expect(model.requests.map((r) => r.toolChoice)).toEqual([undefined, undefined])
    // Without the limit nothing is counted: its turns are stored as before the setting existed.
    expect(await countStored(free)).toBe(false)
    expect(looped.status).toBe('failed')
    expect(looped.events.at(-1)).toMatchObject({
      type: 'turn.failed',
      message: 'tool loop limit reached: 2 tool rounds in one turn',
    })
  })
})
