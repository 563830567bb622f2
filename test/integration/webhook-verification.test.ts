import { beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { WebhookConfigSchema } from '../../src/contract/webhook-config.ts'
import { useEngineWithRunner } from '../support/engine-with-runner.ts'
import { toolCall } from '../support/model-tool-call.ts'
import { signMessage } from '../support/signed-callback.ts'

/**
 * A webhook delivery ends its session with its turn (`end_after_turn`), except where the session
 * requires its changes verified (`harness.verification: required`) and the turn changed a file:
 * the delivery is answered (200, the turn `completed`, a warning saying why), its session stays
 * open — no `thread.completed` — to be verified, then completed; a redelivery answers the same,
 * running nothing. The real engine, the reference runner and the HTTP app.
 */
const fixture = useEngineWithRunner('webhook-verify')
const SECRET = `whsec_${Buffer.from('webhook-verification-secret-0123').toString('base64')}`
let app: ReturnType<typeof createApp>

beforeAll(() => {
  app = createApp({
    api: fixture.engine.service,
    auth: { keys: [] },
    webhooks: {
      change: WebhookConfigSchema.parse({
        secret: SECRET,
        tenant: 'local',
        session: { workspace: 'webhook-verify', harness: { verification: 'required' } },
        prompt: 'Do what the event asks: {{body}}',
      }),
    },
    log: () => {},
  })
})

type Delivered = {
  session_id: string
  duplicate: boolean
  turn: { status: string; events: ThreadEvent[]; warnings?: string[] }
}

/** The same delivery (one webhook-id), signed anew at each send. */
function delivery(payload: string) {
  const id = `msg_${crypto.randomUUID()}`
  return async () => {
    const signed = signMessage(SECRET, payload, id)
    const answer = await app.request('/v1/webhooks/change', {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    })
    return { status: answer.status, body: (await answer.json()) as Delivered }
  }
}

describe('a webhook delivery and a required verification', () => {
  it('a turn that changed a file leaves its session open: answered, then verified and completed', async () => {
    const { service, mock } = fixture.engine
    mock.enqueue(
      {
        toolCalls: [
          toolCall('w', 'write_file', {
            path: 'src/add.js',
            content: 'export const add = (a, b) => a + b\n',
          }),
        ],
      },
      { text: 'Added add().' },
    )
    const send = delivery('{"ask":"an add function in src/add.js"}')
    const first = await send()
    expect(first.status).toBe(200)
    const { session_id: id, turn } = first.body
    expect(first.body.duplicate).toBe(false)
    // The turn ran and changed the file; the session was not ended unverified.
    expect(turn.status).toBe('completed')
    const types = turn.events.map((event) => event.type)
    expect(types).toContain('turn.completed')
    expect(types).not.toContain('thread.completed')
    const warned = (turn.warnings ?? []).join('\n')
    expect(warned).toContain('the session stays open: turn-1 changed src/add.js')
    expect(warned).toContain('harness.verification is required')
    expect((await service.getSession('local', id)).status).toBe('active')
    await expect(service.complete('local', id)).rejects.toMatchObject({
      code: 'conflict',
      details: { reason: 'verification_required', turn_id: 'turn-1' },
    })

    // Delivered again: the first answer, nothing run.
    const asked = mock.requests.length
    const again = await send()
    expect(again.status).toBe(200)
    expect(again.body).toEqual({ ...first.body, duplicate: true })
    expect(mock.requests).toHaveLength(asked)

    mock.enqueue(
      { toolCalls: [toolCall('r', 'read_file', { path: 'src/add.js' })] },
      {
        text: '## Verification Result\n\n**Decision:** APPROVE\n\n**Issues Found:** None\n\n**Reasoning:** add adds.',
      },
    )
    const verified = await app.request(`/v1/sessions/${id}/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    expect(verified.status).toBe(200)
    const completed = await service.complete('local', id)
    expect(completed.status).toBe('terminal')
    expect(completed.events.map((event) => event.type)).toEqual(['thread.completed'])
    // Once completed, a redelivery still answers the delivery's own turn, running nothing.
    const late = await send()
    expect(late.body).toEqual({ ...first.body, duplicate: true })
    mock.assertDone()
  })

  it('a turn that changed nothing ends its session with the turn', async () => {
    const { mock } = fixture.engine
    mock.enqueue({ text: 'Nothing to change.' })
    const first = await delivery('{"ask":"look around"}')()
    expect(first.status).toBe(200)
    expect(first.body.turn.status).toBe('terminal')
    expect(first.body.turn.events.map((event) => event.type).at(-1)).toBe('thread.completed')
    mock.assertDone()
  })
})
