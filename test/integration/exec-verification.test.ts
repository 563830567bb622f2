import { describe, expect, it } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { useEngineWithRunner } from '../support/engine-with-runner.ts'
import { toolCall } from '../support/model-tool-call.ts'

/**
 * An exec run ends its session with its turn, keyed or not, except where the session requires
 * its changes verified (`harness.verification: required`) and the turn changed a file: both runs
 * then answer the check's 409 and leave the session open, to be verified, then completed.
 */
const fixture = useEngineWithRunner('exec-verify')

describe('exec and a required verification', () => {
  it.each([
    ['with an Idempotency-Key', 'keyed', { idempotencyKey: 'exec-verify-key-0001' }],
    ['without one', 'unkeyed', {}],
  ])(
    'a run %s leaves an unverified change open: 409, then verify and complete',
    async (_, name, options) => {
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
      const events: ThreadEvent[] = []
      const body = {
        workspace: `exec-verify-${name}`,
        harness: { verification: 'required' as const },
        prompt: 'Write an add function in src/add.js.',
      }
      const run = service.exec('local', body, {
        ...options,
        onEvent: (event) => events.push(event),
      })
      await expect(run).rejects.toMatchObject({
        code: 'conflict',
        details: { reason: 'verification_required', turn_id: 'turn-1' },
      })
      // The turn ran and changed the file; the session was not ended unverified.
      const types = events.map((event) => event.type)
      expect(types).toContain('turn.completed')
      expect(types).not.toContain('thread.completed')
      const started = events[0]
      const id = started?.type === 'thread.started' ? started.thread_id : ''
      expect((await service.getSession('local', id)).status).toBe('active')
      await expect(service.complete('local', id)).rejects.toMatchObject({ code: 'conflict' })

      mock.enqueue(
        { toolCalls: [toolCall('r', 'read_file', { path: 'src/add.js' })] },
        {
          text: '## Verification Result\n\n**Decision:** APPROVE\n\n**Issues Found:** None\n\n**Reasoning:** add adds.',
        },
      )
      const verified = await fixture.app.request(`/v1/sessions/${id}/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
      expect(verified.status).toBe(200)
      expect((await service.complete('local', id)).status).toBe('terminal')
      mock.assertDone()
    },
  )

  it('a run whose turn changed nothing ends its session with the turn, keyed or not', async () => {
    const { service, mock } = fixture.engine
    for (const options of [{ idempotencyKey: 'exec-verify-key-0002' }, {}]) {
      mock.enqueue({ text: 'Nothing to change.' })
      const body = {
        workspace: 'exec-verify-plain',
        harness: { verification: 'required' as const },
        prompt: 'Look around.',
      }
      const answer = await service.exec('local', body, options)
      expect(answer.events.map((event) => event.type).at(-1)).toBe('thread.completed')
    }
    mock.assertDone()
  })
})
