import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { echoTool } from '../support/engine-deps.ts'
import { lambdaDeadline } from '../support/lambda-deadline.ts'
import { parseSse } from '../support/sse-frames.ts'

/**
 * The other runs a request carries out on Lambda, and the function's timeout: exec, a response
 * without `background`, a webhook's delivery without a work queue, a loop step. Each must pause
 * as a turn does (lambda-turn-deadline.test.ts) — its work committed, nothing run twice — and
 * answer in its own format that it paused and how it goes on: exec with an `error` line naming
 * its open session, a response `incomplete` (reason `paused`), a delivery 409 so that its sender
 * delivers it again (which continues it), a loop step `waiting`. A tool round pauses between
 * two of its calls as well, the calls not started left for the next call.
 */
const { clock, mock, call, delivery, model, slowRound, storedEvents } =
  lambdaDeadline('lambda-run-deadlines')

/** The receiver of the `lookup` HTTP tool: counts its calls, runs `onCall` as each arrives. */
let receiver: Server
let toolUrl = ''
const tool = { calls: 0, onCall: () => {} }
beforeAll(async () => {
  receiver = createServer((request, response) => {
    tool.calls += 1
    tool.onCall()
    request.resume()
    request.on('end', () => response.writeHead(200).end('found'))
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  toolUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/lookup`
})
afterAll(async () => {
  receiver.closeAllConnections()
  await new Promise<void>((resolve) => receiver.close(() => resolve()))
})

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

  it.each([
    ['without', {}],
    ['with', { 'idempotency-key': 'exec-deadline-1' }],
  ])(
    'exec %s an Idempotency-Key ends with an error line naming its open session; a turn without input finishes it and the session',
    async (_, headers) => {
      slowRound()
      const first = await call('POST', '/v1/exec', { prompt: 'go' }, headers)
      expect(first.status).toBe(200)
      const lines = first.text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; thread_id?: string; message?: string })
      const id = lines[0]?.thread_id ?? ''
      expect(lines.map((l) => l.type)).not.toContain('thread.completed')
      const last = lines.at(-1)
      expect(last?.type).toBe('error')
      expect(last?.message).toContain("paused: the request's time runs out")
      expect(last?.message).toContain(`POST /v1/sessions/${id}/turns`)

      clock.left = 300_000
      const second = await call('POST', `/v1/sessions/${id}/turns`, {})
      // The thread ends with the turn, as the run would have ended it: no POST …/complete.
      expect(JSON.parse(second.text)).toMatchObject({ status: 'terminal' })
      const events = await storedEvents(id)
      expect(events.filter((e) => e.type === 'thread.completed')).toHaveLength(1)
      expect(events.filter((e) => e.type === 'turn.started')).toHaveLength(1)
      expect(await toolOutputs(id)).toBe(1)
      expect(mock().requests).toHaveLength(2)
    },
    60_000,
  )

  it.each([
    ['unstreamed', false],
    ['streamed', true],
  ])(
    'a response %s ends incomplete, reason paused; its session continues and it reads back completed',
    async (_, stream) => {
      slowRound()
      const first = await call('POST', '/v1/responses', { input: 'go', stream })
      expect(first.status).toBe(200)
      type Resource = { id: string; status: string; incomplete_details: { reason: string } | null }
      let response: Resource
      if (stream) {
        const frames = parseSse(first.text).frames
        expect(frames.map((f) => f.event)).not.toContain('response.completed')
        const end = frames.findLast((f) => f.event === 'response.incomplete')
        response = (JSON.parse(end?.data ?? '{}') as { response: Resource }).response
        expect(frames.at(-1)?.data).toBe('[DONE]')
      } else {
        response = JSON.parse(first.text) as Resource
      }
      expect(response.status).toBe('incomplete')
      expect(response.incomplete_details).toEqual({ reason: 'paused' })
      const id = response.id.slice('resp_'.length)
      let events = await storedEvents(id)
      expect(events.filter((e) => e.item?.type === 'tool_output')).toHaveLength(0)

      clock.left = 300_000
      const second = await call('POST', `/v1/sessions/${id}/turns`, {})
      expect(second.status).toBe(200)
      const read = await call('GET', `/v1/responses/${response.id}`)
      expect(JSON.parse(read.text)).toMatchObject({ id: response.id, status: 'completed' })
      events = await storedEvents(id)
      expect(events.filter((e) => e.type === 'turn.started')).toHaveLength(1)
      expect(await toolOutputs(id)).toBe(1)
      expect(mock().requests).toHaveLength(2)
    },
    60_000,
  )

  it('a webhook delivery run in the request answers 409 when paused; delivered again it goes on, once', async () => {
    slowRound()
    const send = delivery('{"event":"push"}')
    const first = await send()
    expect(first.status).toBe(409)
    const refused = JSON.parse(first.text) as {
      error: { code: string; message: string; details: { session_id: string } }
    }
    expect(refused.error.code).toBe('conflict')
    expect(refused.error.message).toContain("paused: the request's time runs out")
    const id = refused.error.details.session_id
    expect(await toolOutputs(id)).toBe(0)

    clock.left = 300_000
    const again = await send()
    expect(again.status).toBe(200)
    expect(JSON.parse(again.text)).toMatchObject({ session_id: id, duplicate: true })
    expect(JSON.parse(again.text).turn.status).toMatch(/completed|terminal/)
    // Once it ended, a further delivery answers the same ending, running nothing.
    const after = await send()
    expect(after.status).toBe(200)
    expect(JSON.parse(after.text).turn.status).toMatch(/completed|terminal/)
    const events = await storedEvents(id)
    expect(events.filter((e) => e.type === 'turn.started')).toHaveLength(1)
    expect(events.filter((e) => e.type === 'thread.completed')).toHaveLength(1)
    expect(await toolOutputs(id)).toBe(1)
    expect(mock().requests).toHaveLength(2)
  }, 60_000)

  it('a tool round pauses between its calls when the timeout nears; the next call runs the rest once', async () => {
    const created = await call('POST', '/v1/sessions', {
      tools: [echoTool(toolUrl)],
      permissions: { mode: 'auto' },
    })
    const id = (JSON.parse(created.text) as { session_id: string }).session_id
    const lookup = (n: string) => ({ id: `c${n}`, name: 'lookup', arguments: `{"q":"${n}"}` })
    model({ step: { toolCalls: [lookup('1'), lookup('2')] } }, { step: { text: 'Done.' } })
    tool.calls = 0
    // The first call took long: 50 s are left once it answered, too little for the second.
    tool.onCall = () => {
      clock.left = 50_000
    }
    const first = await call('POST', `/v1/sessions/${id}/turns`, { input: 'go' })
    const paused = JSON.parse(first.text) as { status: string; warnings: string[] }
    expect(paused.status).toBe('waiting')
    expect(paused.warnings.join('\n')).toContain("paused: the request's time runs out in 50 s")
    expect(tool.calls).toBe(1)
    expect(await toolOutputs(id)).toBe(1)

    clock.left = 300_000
    tool.onCall = () => {}
    const second = await call('POST', `/v1/sessions/${id}/turns`, {})
    expect(JSON.parse(second.text)).toMatchObject({ status: 'completed' })
    expect(tool.calls).toBe(2)
    expect(await toolOutputs(id)).toBe(2)
    expect(mock().requests).toHaveLength(2)
  }, 60_000)
})
