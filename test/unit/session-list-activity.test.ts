import { describe, expect, it } from 'vitest'
import { echoTool } from '../support/engine-deps.ts'
import { useScriptedEngine } from '../support/scripted-engine.ts'

const fixture = useScriptedEngine()

/**
 * `GET /v1/sessions` (SessionService.listSessions): each session's last activity and what it
 * waits for between calls, as `GET /v1/sessions/{id}` says it in `activity`.
 */
describe('the session list', () => {
  it('orders by last activity and shows what each session waits for', async () => {
    const { service, model, receiver } = fixture.engine
    const first = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      permissions: { mode: 'default' },
    })
    const second = await service.createSession('t1', {})
    const listed = async () =>
      (await service.listSessions('t1', { workspace: 'default', limit: 50, order: 'newest' }))
        .sessions
    expect((await listed()).map((s) => s.session_id)).toEqual([second.session_id, first.session_id])
    model.enqueue({ toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }] })
    const asked = await service.stepTurn('t1', first.session_id, { input: 'look it up' })
    expect(asked.status).toBe('awaiting_approval')
    const [top, next] = await listed()
    expect(top).toMatchObject({
      session_id: first.session_id,
      activity_state: 'awaiting_approval',
      title: 'look it up',
    })
    expect(top?.turn_state).toBeUndefined()
    expect(Date.parse(top?.last_activity_at ?? '')).toBeGreaterThanOrEqual(
      Date.parse(next?.last_activity_at ?? ''),
    )
    expect(next).toMatchObject({ session_id: second.session_id })
    expect(next?.activity_state).toBeUndefined()
    const view = await service.getSession('t1', first.session_id)
    expect(view.activity?.state).toBe('awaiting_approval')
  })
})
