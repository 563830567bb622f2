import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { echoTool } from '../support/engine-deps.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { artifactIn, pastedLog, sha, userText } from '../support/pasted-log.ts'
import { s3StoreEnv } from '../support/server-memory.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'

/**
 * A follow-up of several MB (`POST …/intents`) through `npm start`'s real entry, on the fs store
 * and on S3 (moto), with a restart of the server between its 202 and the turn that applies it:
 * the text is kept whole as an artifact of the session when it is accepted (read back byte for
 * byte through the API), what stays queued is its preview, the turn that applies it sends the
 * model a request under 100 KB naming the artifact, the model pages through the middle with
 * `read_tool_output`, later requests stay small, and the turn's record lists the follow-up's
 * preview and names its artifact. A short follow-up beside it stays inline. The other texts a
 * client answers a turn with are kept the same way: a permission's `followup` answer, and the
 * output of a client's function call given to `POST /v1/responses`.
 */
const FOLLOW_UP_BYTES = 3 * 1024 * 1024
const KEY = 'acme-intent-artifacts-key-0123456789'

for (const store of ['fs', 's3'] as const) {
  describe(`a 3 MB follow-up through npm start, across a restart (${store})`, () => {
    let dir: string
    let mock: MockOpenAI
    let server: NodeEntry | undefined
    let bucket: Awaited<ReturnType<typeof createTestBucket>> | undefined
    let env: Record<string, string>

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'turnline-intent-artifacts-'))
      await chmod(dir, 0o711)
      mock = await startMockOpenAI()
      const s3 = store === 's3' ? requireServices().s3 : undefined
      bucket = s3 ? await createTestBucket(s3, 'intents') : undefined
      env = {
        PORT: '0',
        TURNLINE_DATA_DIR: join(dir, 'data'),
        TURNLINE_API_KEYS: `${KEY}=acme`,
        OPENAI_API_KEY: 'sk-intent-artifacts',
        OPENAI_BASE_URL: mock.baseURL,
        TURNLINE_MODEL: 'gpt-4o-mini',
        TURNLINE_MAX_BODY_BYTES: String(16 * 1024 * 1024),
        TURNLINE_LOG: 'off',
        TURNLINE_TOOL_ALLOWED_HOSTS: '127.0.0.1:9',
        ...(s3 && bucket ? s3StoreEnv(s3, bucket.bucket) : {}),
      }
    }, 60_000)

    afterAll(async () => {
      await server?.stop()
      await mock?.close()
      await bucket?.destroy()
      if (dir) await rm(dir, { recursive: true, force: true })
    })

    let current: string | undefined
    const start = async () => {
      server = startNodeEntry(env)
      current = await server.listening()
      return current
    }
    const call = async (url: string, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      return { status: response.status, json: (await response.json()) as Record<string, unknown> }
    }

    // Two starts of the server and a 3 MB follow-up: generous on a loaded machine.
    it('is kept whole when accepted; the turn that applies it sends a preview under 100 KB and pages through it', {
      timeout: 180_000,
    }, async () => {
      const log = pastedLog(FOLLOW_UP_BYTES, 'steer', 'MIDDLE-9c2')
      const middle = log.indexOf('MIDDLE-9c2')
      let url = await start()
      const created = await call(url, 'POST', '/v1/sessions', {})
      const session = String(created.json.session_id)
      mock.enqueue({ text: 'ready' })
      const first = await call(url, 'POST', `/v1/sessions/${session}/turns`, { input: 'hello' })
      expect(first.status).toBe(200)

      const long = await call(url, 'POST', `/v1/sessions/${session}/intents`, { text: log })
      expect(long.status, JSON.stringify(long.json).slice(0, 400)).toBe(202)
      expect(long.json.pending).toBe(1)
      const short = await call(url, 'POST', `/v1/sessions/${session}/intents`, {
        text: 'Then list the odd lines.',
      })
      expect(short.status).toBe(202)

      // A restart between the 202s and the turn: the queued follow-ups come back from the store.
      await server?.stop()
      url = await start()

      mock.respond((request) => {
        const messages = (request.body.messages ?? []) as { role: string }[]
        if (messages.some((m) => m.role === 'tool')) return { text: 'found it' }
        const id = artifactIn(userText(request))
        const args = { artifact_id: id, offset: middle - 100, length: 300 }
        return {
          toolCalls: [
            { id: 'call_read', name: 'read_tool_output', arguments: JSON.stringify(args) },
          ],
        }
      })
      const asked = mock.requests.length
      const turn = await call(url, 'POST', `/v1/sessions/${session}/turns`, {})
      mock.respond(undefined)
      expect(turn.status, JSON.stringify(turn.json).slice(0, 400)).toBe(200)
      expect(turn.json.status).toBe('completed')

      const [opening, paged] = mock.requests.slice(asked)
      expect(JSON.stringify(opening?.body).length).toBeLessThan(100_000)
      expect(JSON.stringify(paged?.body).length).toBeLessThan(100_000)
      const preview = userText(opening)
      const id = artifactIn(preview) ?? ''
      expect(id).not.toBe('')
      expect(preview).toContain(`[input of ${log.length.toLocaleString('en-US')} bytes`)
      expect(preview).toContain(log.slice(0, 2000))
      expect(preview).toContain(log.slice(-2000))
      expect(preview).not.toContain('MIDDLE-9c2')
      expect(preview).toContain('Then list the odd lines.')
      const read = ((paged?.body.messages ?? []) as { role: string; content: string }[]).find(
        (m) => m.role === 'tool',
      )
      expect(read?.content).toContain('MIDDLE-9c2')

      // Byte-identical through the API.
      const whole = await fetch(`${url}/v1/sessions/${session}/artifacts/${id}`, {
        headers: { authorization: `Bearer ${KEY}` },
      })
      expect(whole.status).toBe(200)
      expect(sha(Buffer.from(await whole.arrayBuffer()))).toBe(sha(log))

      // The turn's record: the long follow-up's preview and its artifact; the short one inline.
      const turns = await call(url, 'GET', `/v1/sessions/${session}/turns`)
      const entries = turns.json.turns as { input?: Record<string, unknown> }[]
      const followUps = entries.at(-1)?.input?.follow_ups as Record<string, unknown>[]
      expect(followUps.map((f) => f.intent_id)).toEqual([long.json.id, short.json.id])
      expect(followUps[0]?.input_artifacts).toEqual([
        { artifact_id: id, size: log.length, lines: log.split('\n').length - 1 },
      ])
      expect(String(followUps[0]?.text).length).toBeLessThan(30_000)
      expect(String(followUps[0]?.text)).toContain(`kept whole as artifact ${id}`)
      expect(followUps[1]).toEqual({ intent_id: short.json.id, text: 'Then list the odd lines.' })

      // A later turn's request holds the preview, not the follow-up.
      mock.enqueue({ text: 'next' })
      const later = mock.requests.length
      const next = await call(url, 'POST', `/v1/sessions/${session}/turns`, { input: 'and now?' })
      expect(next.status).toBe(200)
      expect(JSON.stringify(mock.requests[later]?.body).length).toBeLessThan(100_000)
    })

    it("a permission's long followup answer and a client's long function output are kept too", {
      timeout: 120_000,
    }, async () => {
      const url = current ?? (await start())
      const kept = async (session: string, id: string, whole: string) => {
        const read = await fetch(`${url}/v1/sessions/${session}/artifacts/${id}`, {
          headers: { authorization: `Bearer ${KEY}` },
        })
        expect(read.status).toBe(200)
        expect(sha(Buffer.from(await read.arrayBuffer()))).toBe(sha(whole))
      }

      // A followup answer (at most 100,000 characters) instead of running the tool.
      const answer = pastedLog(99_000, 'answer', 'MIDDLE-9c2')
      const created = await call(url, 'POST', '/v1/sessions', {
        tools: [echoTool('http://127.0.0.1:9/lookup')],
        permissions: { mode: 'default' },
      })
      const session = String(created.json.session_id)
      mock.enqueue({ toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }] })
      const asking = await call(url, 'POST', `/v1/sessions/${session}/turns`, { input: 'look' })
      expect(asking.json.status).toBe('awaiting_approval')
      const decided = await call(url, 'POST', `/v1/sessions/${session}/permissions`, {
        tool_name: 'lookup',
        decision: 'followup',
        message: answer,
      })
      expect(decided.status, JSON.stringify(decided.json).slice(0, 400)).toBe(200)
      mock.enqueue({ text: 'understood' })
      const asked = mock.requests.length
      const resumed = await call(url, 'POST', `/v1/sessions/${session}/turns`, {})
      expect(resumed.json.status).toBe('completed')
      const sent = JSON.stringify(mock.requests[asked]?.body)
      expect(sent).toContain(`[input of ${answer.length.toLocaleString('en-US')} bytes`)
      expect(sent).not.toContain('MIDDLE-9c2')
      expect(sent.length).toBeLessThan(answer.length)
      await kept(session, artifactIn(userText(mock.requests[asked])) ?? '', answer)

      // The output of a client's function call, given with the conversation.
      const output = pastedLog(900_000, 'output', 'MIDDLE-9c2')
      mock.enqueue({ text: 'summarized' })
      const before = mock.requests.length
      const response = await call(url, 'POST', '/v1/responses', {
        input: [
          { role: 'user', content: 'Fetch the log and summarize it.' },
          { type: 'function_call', call_id: 'call_log', name: 'fetch_log', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_log', output },
        ],
        tools: [{ type: 'function', name: 'fetch_log', parameters: { type: 'object' } }],
      })
      expect(response.status, JSON.stringify(response.json).slice(0, 400)).toBe(200)
      const request = mock.requests[before]
      expect(JSON.stringify(request?.body).length).toBeLessThan(100_000)
      const messages = (request?.body.messages ?? []) as { role: string; content: string }[]
      const tool = messages.find((m) => m.role === 'tool')?.content ?? ''
      expect(tool).toContain(`[output of ${output.length.toLocaleString('en-US')} bytes`)
      expect(tool).not.toContain('MIDDLE-9c2')
      const names = ((request?.body.tools ?? []) as { function: { name: string } }[]).map(
        (t) => t.function.name,
      )
      expect(names).toContain('read_tool_output')
      const responseSession = String(response.json.id).replace(/^resp_/, '')
      await kept(responseSession, artifactIn(tool) ?? '', output)
    })
  })
}
