import { describe, expect, it } from 'vitest'
import { listAll } from '../../src/store/list-all.ts'
import { echoTool } from '../support/engine-harness.ts'
import { useScriptedEngine } from '../support/scripted-engine.ts'

const fixture = useScriptedEngine()
const AFTER_TURN_2 = ['user:q1', 'assistant:a1', 'user:q2', 'assistant:a2']

type Sent = { role: string; content: string }[]
const conversation = (messages: unknown) =>
  (messages as Sent).filter((m) => m.role !== 'system').map((m) => `${m.role}:${m.content}`)

/** POST …/fork {at_turn}: the new session starts from the state after that turn. */
describe('fork at a chosen turn', () => {
  it('starts the fork with the transcript exactly as that turn left it, with no summary call', async () => {
    const { service, model, store } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    model.enqueue({ text: 'a1' }, { text: 'a2' }, { text: 'a3' })
    await service.stepTurn('t1', session_id, { input: 'q1' })
    await service.stepTurn('t1', session_id, { input: 'q2' })
    await service.stepTurn('t1', session_id, { input: 'q3' })
    const root = `t1/default/.vtcode/sessions/${session_id}/`
    const before = (await listAll(store, root)).objects.map((o) => `${o.key} ${o.size}`)

    // no model request is scripted: a summary call would fail the test
    const forked = await service.fork('t1', session_id, { at_turn: 2 })
    expect(forked).toMatchObject({ status: 'active', forked_from: session_id })
    expect((await listAll(store, root)).objects.map((o) => `${o.key} ${o.size}`)).toEqual(before)

    model.enqueue({ text: 'forked answer' })
    await service.stepTurn('t1', forked.session_id, { input: 'q3 again, differently' })
    expect(conversation(model.requests.at(-1)?.messages)).toEqual([
      ...AFTER_TURN_2,
      'user:q3 again, differently',
    ])
    // the fork is a session of its own; the source goes on unchanged
    model.enqueue({ text: 'a4' })
    await service.stepTurn('t1', session_id, { input: 'q4' })
    expect(conversation(model.requests.at(-1)?.messages)).toEqual([
      ...AFTER_TURN_2,
      'user:q3',
      'assistant:a3',
      'user:q4',
    ])
    // at turn 1 of the fork's own
    const again = await service.fork('t1', forked.session_id, {
      at_turn: 1,
      limits: { max_turns: 3 },
    })
    model.enqueue({ text: 'x' })
    await service.stepTurn('t1', again.session_id, { input: 'from the fork' })
    expect(conversation(model.requests.at(-1)?.messages)).toEqual([
      ...AFTER_TURN_2,
      'user:q3 again, differently',
      'assistant:forked answer',
      'user:from the fork',
    ])
    expect((await service.getSession('t1', again.session_id)).config.limits?.max_turns).toBe(3)
  })

  it('refuses a turn the session never had, and one that has not ended', async () => {
    const { service, model, receiver } = fixture.engine
    const { session_id } = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      permissions: { mode: 'default' },
    })
    model.enqueue({ text: 'a1' })
    await service.stepTurn('t1', session_id, { input: 'q1' })
    await expect(service.fork('t1', session_id, { at_turn: 2 })).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'at_turn: the session has no turn-2',
      details: { field: 'body.at_turn' },
    })
    model.enqueue({ toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }] })
    expect((await service.stepTurn('t1', session_id, { input: 'go' })).status).toBe(
      'awaiting_approval',
    )
    await expect(service.fork('t1', session_id, { at_turn: 2 })).rejects.toMatchObject({
      code: 'invalid_input',
      message: 'at_turn: turn-2 has not ended yet',
    })
    // turn 1 had ended: forking there works while turn 2 waits
    const forked = await service.fork('t1', session_id, { at_turn: 1 })
    model.enqueue({ text: 'b' })
    await service.stepTurn('t1', forked.session_id, { input: 'q2' })
    expect(conversation(model.requests.at(-1)?.messages)).toEqual([
      'user:q1',
      'assistant:a1',
      'user:q2',
    ])
    await expect(service.fork('t2', session_id, { at_turn: 1 })).rejects.toMatchObject({
      code: 'not_found',
    })
  })
})
