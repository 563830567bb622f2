import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { artifactIn, pastedLog, sha, userText } from '../support/pasted-log.ts'
import { peakResident, s3StoreEnv } from '../support/server-memory.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'

/**
 * A turn input of several MB through `npm start`'s real entry, in its own process, on the fs
 * store and on S3 (moto): the text is kept whole as an artifact of the session (read back byte
 * for byte through the API), the model gets a bounded preview naming it (the next request stays
 * under 100 KB) and pages through the middle of it with `read_tool_output`, the turn's record
 * shows the preview and names the artifact, and the server's peak resident memory grows by less
 * than MEMORY_BOUND (docs/limits.md). `POST /v1/responses` keeps a long input the same way.
 */
const INPUT_BYTES = 5 * 1024 * 1024
/**
 * The body is read (5 MB) and parsed into one string (5 MB), each slice of it encoded (at most
 * 768 KiB) and one chunk (1 MiB) held while it is stored; the preview and the request are
 * bounded. A few copies of the input, whatever the store.
 */
const MEMORY_BOUND = 64 * 1024 * 1024
const KEY = 'acme-input-artifacts-key-0123456789'

for (const store of ['fs', 's3'] as const) {
  describe(`a 5 MB pasted input through npm start (${store})`, () => {
    let dir: string
    let mock: MockOpenAI
    let server: NodeEntry
    let url: string
    let bucket: Awaited<ReturnType<typeof createTestBucket>> | undefined

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'turnline-input-artifacts-'))
      await chmod(dir, 0o711)
      mock = await startMockOpenAI()
      const s3 = store === 's3' ? requireServices().s3 : undefined
      bucket = s3 ? await createTestBucket(s3, 'inputs') : undefined
      server = startNodeEntry({
        PORT: '0',
        TURNLINE_DATA_DIR: join(dir, 'data'),
        TURNLINE_API_KEYS: `${KEY}=acme`,
        OPENAI_API_KEY: 'sk-input-artifacts',
        OPENAI_BASE_URL: mock.baseURL,
        TURNLINE_MODEL: 'gpt-4o-mini',
        TURNLINE_MAX_BODY_BYTES: String(16 * 1024 * 1024),
        TURNLINE_LOG: 'off',
        ...(s3 && bucket ? s3StoreEnv(s3, bucket.bucket) : {}),
      })
      url = await server.listening()
    }, 60_000)

    afterAll(async () => {
      await server?.stop()
      await mock?.close()
      await bucket?.destroy()
      if (dir) await rm(dir, { recursive: true, force: true })
    })

    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
      return { status: response.status, json: (await response.json()) as Record<string, unknown> }
    }

    it('is kept whole; the model reads a preview under 100 KB and pages through the middle; memory stays bounded', async () => {
      const log = pastedLog(INPUT_BYTES, 'req', 'MIDDLE-4b1')
      const middle = log.indexOf('MIDDLE-4b1')
      const created = await call('POST', '/v1/sessions', {})
      const session = String(created.json.session_id)
      // A small turn first: the server's peak then includes what an ordinary turn needs.
      mock.enqueue({ text: 'ready' })
      expect((await call('POST', `/v1/sessions/${session}/turns`, { input: 'hello' })).status).toBe(
        200,
      )

      // The model reads the bytes around the marker through the artifact its preview names.
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
      const group = server.child.pid ?? 0
      const before = peakResident(group)
      const asked = mock.requests.length
      const turn = await call('POST', `/v1/sessions/${session}/turns`, {
        input: [
          { type: 'input_text', text: 'Find the odd line in this log.' },
          { type: 'input_text', text: log },
        ],
      })
      const growth = peakResident(group) - before
      mock.respond(undefined)
      expect(turn.status, JSON.stringify(turn.json).slice(0, 400)).toBe(200)
      expect(turn.json.status).toBe('completed')

      const [first, second] = mock.requests.slice(asked)
      expect(JSON.stringify(first?.body).length).toBeLessThan(100_000)
      expect(JSON.stringify(second?.body).length).toBeLessThan(100_000)
      const preview = userText(first)
      const id = artifactIn(preview) ?? ''
      expect(id).not.toBe('')
      expect(preview).toContain('Find the odd line in this log.')
      expect(preview).toContain(`[input of ${log.length.toLocaleString('en-US')} bytes`)
      expect(preview).toContain(log.slice(0, 2000))
      expect(preview).toContain(log.slice(-2000))
      expect(preview).not.toContain('MIDDLE-4b1')
      const toolNames = ((first?.body.tools ?? []) as { function: { name: string } }[]).map(
        (t) => t.function.name,
      )
      expect(toolNames).toContain('read_tool_output')
      const read = ((second?.body.messages ?? []) as { role: string; content: string }[]).find(
        (m) => m.role === 'tool',
      )
      expect(read?.content).toContain(`[${id}: bytes ${middle - 100}–${middle + 200} of`)
      expect(read?.content).toContain('MIDDLE-4b1')

      // Byte-identical through the API.
      const whole = await fetch(`${url}/v1/sessions/${session}/artifacts/${id}`, {
        headers: { authorization: `Bearer ${KEY}` },
      })
      expect(whole.status).toBe(200)
      expect(sha(Buffer.from(await whole.arrayBuffer()))).toBe(sha(log))

      // The turn's record: the preview, and the artifact named.
      const turns = await call('GET', `/v1/sessions/${session}/turns`)
      const entries = turns.json.turns as { input?: Record<string, unknown> }[]
      const recorded = entries.at(-1)?.input
      expect(recorded?.input_artifacts).toEqual([
        { artifact_id: id, size: log.length, lines: log.split('\n').length - 1 },
      ])
      expect(JSON.stringify(recorded?.input).length).toBeLessThan(30_000)
      expect(JSON.stringify(recorded?.input)).toContain(`kept whole as artifact ${id}`)

      expect(growth, `peak grew ${growth} bytes`).toBeLessThan(MEMORY_BOUND)
      console.log(
        `[${store}] peak RSS growth with a 5 MB turn input: ${(growth / 2 ** 20).toFixed(1)} MiB`,
      )
    })

    it('POST /v1/responses keeps a long input the same way, and a long earlier message of its conversation', async () => {
      const log = pastedLog(2 * 1024 * 1024, 'resp', 'MIDDLE-4b1')
      const asked = mock.requests.length
      mock.enqueue({ text: 'summarized' })
      const earlier = pastedLog(1024 * 1024, 'seed', 'MIDDLE-4b1')
      const response = await call('POST', '/v1/responses', {
        input: [
          // an earlier message of the conversation: it seeds the transcript, kept the same way
          { role: 'user', content: earlier },
          { role: 'assistant', content: 'Send the next one.' },
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'Summarize this log.' },
              { type: 'input_text', text: log },
            ],
          },
        ],
      })
      expect(response.status, JSON.stringify(response.json).slice(0, 400)).toBe(200)
      expect(response.json.status).toBe('completed')
      const sent = mock.requests[asked]
      expect(JSON.stringify(sent?.body).length).toBeLessThan(100_000)
      const preview = userText(sent)
      expect(preview).toContain('Summarize this log.')
      // The message's texts are one text of the turn's input, kept whole.
      const text = `Summarize this log.\n\n${log}`
      expect(preview).toContain(`[input of ${text.length.toLocaleString('en-US')} bytes`)
      const ids = [...preview.matchAll(/kept whole as artifact (out_[0-9a-f]{32})/g)].map(
        (m) => m[1],
      )
      expect(ids).toHaveLength(2)
      expect(preview).toContain(`[input of ${earlier.length.toLocaleString('en-US')} bytes`)
      const id = ids[1] ?? ''
      const session = String(response.json.id).replace(/^resp_/, '')
      const whole = await fetch(`${url}/v1/sessions/${session}/artifacts/${id}`, {
        headers: { authorization: `Bearer ${KEY}` },
      })
      expect(whole.status).toBe(200)
      expect(sha(Buffer.from(await whole.arrayBuffer()))).toBe(sha(text))
    })
  })
}
