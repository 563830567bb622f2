import { describe, expect, it } from 'vitest'
import { lambdaDeadline } from '../support/lambda-deadline.ts'

/**
 * The other runs a request carries out on Lambda, and the function's timeout: a loop step. It
 * must pause as a turn does (lambda-turn-deadline.test.ts) — its work committed, nothing run
 * twice — and answer in its own format that it paused and how it goes on: `waiting`.
 */
const { clock, mock, call, model, storedEvents } = lambdaDeadline('lambda-run-deadlines')

/** The model asks for a tool (30 s are left once it has answered), then ends. */
function slowRound() {
  model(
    {
      step: { toolCalls: [{ id: 'c1', name: 'no_such_tool', arguments: '{}' }] },
      onAsked: () => {
        clock.left = 30_000
      },
    },
    { step: { text: 'Done.' } },
  )
}

/** The tool outputs a session committed: one, once its round ran. */
async function toolOutputs(id: string): Promise<number> {
  const events = await storedEvents(id)
  return events.filter((e) => e.type === 'item.completed' && e.item?.type === 'tool_output').length
}

describe('Lambda: runs carried out in the request pause before the function timeout', () => {
  it('a loop step run in the request pauses with its turn; the next step call finishes it once', async () => {
    const created = await call('POST', '/v1/loops', { task: 'tidy the repo' })
    expect(created.status).toBe(201)
    const { loop_id } = JSON.parse(created.text) as { loop_id: string }
    slowRound()
    const first = await call('POST', `/v1/loops/${loop_id}/step`, {})
    expect(first.status).toBe(200)
    const paused = JSON.parse(first.text) as {
      loop: { step_index: number }
      step?: unknown
      waiting?: { session_id: string; status: string; warnings?: string[] }
    }
    expect(paused.step).toBeUndefined()
    expect(paused.waiting?.status).toBe('waiting')
    expect(paused.waiting?.warnings?.join('\n')).toContain("paused: the request's time runs out")
    expect(paused.loop.step_index).toBe(0)
    const session = paused.waiting?.session_id ?? ''
    expect((await storedEvents(session)).map((e) => e.type)).not.toContain('turn.completed')

    clock.left = 300_000
    const second = await call('POST', `/v1/loops/${loop_id}/step`, {})
    const done = JSON.parse(second.text) as { loop: { step_index: number }; step?: object }
    expect(done.step).toMatchObject({ index: 0, session_id: session })
    expect(done.loop.step_index).toBe(1)
    const events = await storedEvents(session)
    expect(events.filter((e) => e.type === 'turn.started')).toHaveLength(1)
    expect(await toolOutputs(session)).toBe(1)
    expect(mock().requests).toHaveLength(2)
  }, 60_000)
})
