import { createHmac } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { UsageReport } from '../../src/contract/tenancy.ts'
import { type AppInstance, startAppInstance } from '../support/app-instance.ts'
import { echoTool } from '../support/engine-deps.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'
import { startToolReceiver } from '../support/tool-receiver.ts'

/**
 * A tenant's daily quota of kept tool output (TURNLINE_LIMIT_OUTPUT_BYTES_PER_DAY) under races
 * on two instances that share only the coordinator (Upstash, the REST proxy in front of
 * redis-server) and the bucket (S3 on moto): each answer of 1.5 MB is counted whole (its
 * Content-Length) before its bytes are stored, atomically with the check, so the outputs kept on
 * both instances together are exactly those that fit; an answer refused mid-way is the tool's error, keeps nothing in the store and
 * counts nothing; `GET /v1/usage` shows the bytes kept.
 */
const KEY = `outq-${crypto.randomUUID().slice(0, 8)}-key-0123456789`
const TENANT = 'outq'
const TOOL_SECRET = 'output-quota-tool-secret-0123456789'
const ANSWER = 1_500_000
const QUOTA = 4_000_000
const TURNS = 8

let backends: TestBackends
let receiver: Awaited<ReturnType<typeof startToolReceiver>>
const instances: AppInstance[] = []

beforeAll(async () => {
  backends = await startTestBackends('output-quota')
  receiver = await startToolReceiver(createHmac('sha256', TOOL_SECRET).update(TENANT).digest('hex'))
  const env = backends.env({
    TURNLINE_API_KEYS: `${KEY}=${TENANT}`,
    TURNLINE_LIMIT_OUTPUT_BYTES_PER_DAY: String(QUOTA),
    TURNLINE_TOOL_SECRET: TOOL_SECRET,
    TURNLINE_TOOL_ALLOWED_HOSTS: receiver.host,
    TURNLINE_LOG: 'off',
  })
  for (let i = 0; i < 2; i++) instances.push(await startAppInstance(env))
}, 60_000)

afterAll(async () => {
  for (const instance of instances) await instance.close()
  await receiver?.close()
  await backends?.close()
})

const call = (path: string, init: RequestInit = {}, on = 0) =>
  fetch(`${instances[on % instances.length]?.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
  })

/** Bytes of every object below the session's `outputs/` folder in the bucket. */
async function outputBytes(sessionId: string): Promise<number> {
  const store = instances[0]?.deps.service.sessions.objects
  if (!store) throw new Error('no instance')
  let total = 0
  let cursor: string | undefined
  do {
    const page = await store.list(TENANT, cursor === undefined ? {} : { cursor })
    for (const object of page.objects) {
      if (object.key.includes(`/sessions/${sessionId}/outputs/`)) total += object.size
    }
    cursor = page.cursor
  } while (cursor !== undefined)
  return total
}

describe('the daily quota of kept tool output, on two instances', () => {
  it('keeps answers racing on both instances within the quota; a refused one keeps nothing', async () => {
    receiver.setReply(() => ({ body: 'y'.repeat(ANSWER), contentLength: true }))
    backends.mock.respond((request) => {
      const messages = request.body.messages as { role: string; content?: string }[]
      const last = messages.at(-1)
      if (last?.role !== 'tool') {
        return { toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"all"}' }] }
      }
      return { text: String(last.content).includes('it was not kept') ? 'refused' : 'kept' }
    })
    const ids: string[] = []
    for (let i = 0; i < TURNS; i++) {
      const created = await call(
        '/v1/sessions',
        { method: 'POST', body: JSON.stringify({ tools: [echoTool(receiver.url)] }) },
        i,
      )
      expect(created.status).toBe(201)
      ids.push(((await created.json()) as { session_id: string }).session_id)
    }
    const turns = await Promise.all(
      ids.map((id, i) =>
        call(`/v1/sessions/${id}/turns`, { method: 'POST', body: '{"input":"go"}' }, i),
      ),
    )
    const answers = await Promise.all(
      turns.map(async (turn) => {
        expect(turn.status).toBe(200)
        const body = (await turn.json()) as {
          status: string
          events: { type: string; item?: { type: string; text?: string } }[]
        }
        expect(body.status).toBe('completed')
        const message = body.events.findLast((e) => e.item?.type === 'agent_message')
        return message?.item?.text
      }),
    )
    const kept = answers.filter((text) => text === 'kept').length
    expect(kept + answers.filter((text) => text === 'refused').length).toBe(TURNS)
    // the answers' length is known (Content-Length), so each is counted whole before any of it
    // is stored: exactly the 2 that fit are kept, whatever the order
    expect(kept).toBe(Math.floor(QUOTA / ANSWER))
    const usage = (await (await call('/v1/usage')).json()) as UsageReport
    expect(usage.output_bytes).toEqual({
      limit: QUOTA,
      used: kept * ANSWER,
      remaining: QUOTA - kept * ANSWER,
    })
    // what the store holds: the kept answers' bytes (and their descriptors), nothing of the rest
    const stored = await Promise.all(ids.map(outputBytes))
    stored.forEach((bytes, i) => {
      if (answers[i] === 'kept') expect(bytes).toBeGreaterThanOrEqual(ANSWER)
      else expect(bytes, `session ${i}, refused`).toBe(0)
    })
  })
})
