import { generateKeyPairSync } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts'
import {
  type MockBedrock,
  type MockVertex,
  startMockBedrock,
  startMockVertex,
} from '../support/mock-claude-platforms.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'

/**
 * Claude on Amazon Bedrock and on Google Cloud Vertex AI through `npm start`'s real entry,
 * configured by the environment alone (docs/models.md#claude-on-bedrock-and-vertex), against
 * local stand-ins that verify what the platforms verify (mock-claude-platforms.ts): Bedrock the
 * AWS Signature Version 4 of every request (checked independently of the signer) and its path
 * and body; Vertex a token its token endpoint issued for the service account's RS256-signed JWT.
 * Behind both, the mock Messages API holds the requests to Anthropic's rules (signed thinking
 * back, tool results after their tool uses).
 */
const KEYS = {
  accessKeyId: 'AKIDTURNLINEBEDROCK',
  secretAccessKey: 'bedrock/secret+key/of/the+test',
  sessionToken: 'FwoGZXIvYXdzEBYaDTurnlineSessionToken',
  region: 'us-west-2',
}
const BEDROCK_MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'
const VERTEX_MODEL = 'claude-sonnet-4-5@20250929'

let dir: string
let mock: MockAnthropic
let bedrock: MockBedrock
let vertex: MockVertex
const servers: NodeEntry[] = []

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-claude-platforms-'))
  mock = await startMockAnthropic()
  bedrock = await startMockBedrock(mock, KEYS)
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  vertex = await startMockVertex(mock, {
    projectId: 'turnline-test',
    region: 'us-east5',
    clientEmail: 'turnline@turnline-test.iam.gserviceaccount.com',
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  })
})
afterEach(() => {
  mock.reset()
})
afterAll(async () => {
  for (const server of servers) await server.stop()
  await bedrock?.close()
  await vertex?.close()
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

async function start(env: Record<string, string>): Promise<string> {
  const server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dir, `data-${servers.length}`),
    ...env,
  })
  servers.push(server)
  return server.listening()
}

/** `npm start` on Bedrock, signing with the test's keys and this secret. */
const bedrockEnv = (secret: string) => ({
  TURNLINE_ANTHROPIC_PLATFORM: 'bedrock',
  AWS_REGION: KEYS.region,
  AWS_ACCESS_KEY_ID: KEYS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: secret,
  AWS_SESSION_TOKEN: KEYS.sessionToken,
  ANTHROPIC_BEDROCK_BASE_URL: bedrock.baseURL,
})

interface Turn {
  status: string
  events: ThreadEvent[]
}

async function api(url: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  })
  const json = (await response.json()) as Record<string, unknown>
  if (response.status >= 300) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`)
  return json
}

const items = (t: Turn) => t.events.flatMap((e) => (e.type === 'item.completed' ? [e.item] : []))
const failure = (t: Turn) => t.events.find((e) => e.type === 'turn.failed')
type Block = Record<string, unknown> & { type: string }
const messagesOf = (n: number) =>
  (mock.requests[n]?.body.messages ?? []) as { role: string; content: Block[] }[]
const lookup = { name: 'read_file', arguments: JSON.stringify({ path: 'missing.txt' }) }

/** A thinking tool loop and a second turn: what goes back must pass the mock API's rules. */
async function toolLoop(url: string, model: string): Promise<Turn[]> {
  const id = (
    await api(url, '/v1/sessions', {
      model: { name: model, api: 'anthropic', reasoning_effort: 'low' },
    })
  ).session_id as string
  mock.enqueue(
    { thinking: 'Read the file first.', toolCalls: [lookup] },
    { thinking: 'It is missing.', text: 'There is no missing.txt.' },
    { text: 'Done.' },
  )
  const first = (await api(url, `/v1/sessions/${id}/turns`, {
    input: 'What is in missing.txt?',
  })) as unknown as Turn
  const second = (await api(url, `/v1/sessions/${id}/turns`, {
    input: 'Thanks',
  })) as unknown as Turn
  return [first, second]
}

describe('Claude on Amazon Bedrock', () => {
  it('signs every request (SigV4 with the session token) and streams a thinking tool loop', async () => {
    const url = await start(bedrockEnv(KEYS.secretAccessKey))
    const [first, second] = await toolLoop(url, BEDROCK_MODEL)
    expect(bedrock.refused).toEqual([])
    expect(first?.status, JSON.stringify(first?.events)).toBe('completed')
    expect(items(first as Turn)).toMatchObject([
      { type: 'reasoning', text: 'Read the file first.' },
      { type: 'tool_invocation', tool_name: 'read_file' },
      { type: 'tool_output' },
      { type: 'reasoning', text: 'It is missing.' },
      { type: 'agent_message', text: 'There is no missing.txt.' },
    ])
    expect(second?.status).toBe('completed')
    expect(bedrock.accepted).toEqual(
      Array(3).fill(`/model/${encodeURIComponent(BEDROCK_MODEL)}/invoke-with-response-stream`),
    )
    // The whole first turn went back through Bedrock, signed thinking included.
    expect(messagesOf(2).map((m) => [m.role, m.content.map((b) => b.type)])).toEqual([
      ['user', ['text']],
      ['assistant', ['thinking', 'tool_use']],
      ['user', ['tool_result']],
      ['assistant', ['thinking', 'text']],
      ['user', ['text']],
    ])
    expect(bedrock.bodies[0]).toMatchObject({
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: expect.any(Number),
    })
    mock.assertDone()
  })

  it('is refused by the stand-in with a wrong secret: the turn fails as an authentication error', async () => {
    const url = await start(bedrockEnv('not-the-secret'))
    const before = bedrock.refused.length
    const id = (
      await api(url, '/v1/sessions', { model: { name: BEDROCK_MODEL, api: 'anthropic' } })
    ).session_id as string
    const turn = (await api(url, `/v1/sessions/${id}/turns`, { input: 'Hello' })) as unknown as Turn
    expect(turn.status).toBe('failed')
    // An auth failure is told without the provider's words, which may name the key.
    const failed = JSON.stringify(failure(turn))
    expect(failed).toMatch(/Model request failed: auth \(HTTP 403\)/)
    expect(failed).not.toMatch(/signature does not match/)
    expect(bedrock.refused.slice(before)).toEqual([
      {
        path: expect.stringContaining('/model/'),
        problem: 'the signature does not match the request',
      },
    ])
    expect(mock.requests).toHaveLength(0)
  })

  it('retries an exception Bedrock sends inside the stream before anything reached the turn', async () => {
    const url = await start(bedrockEnv(KEYS.secretAccessKey))
    const id = (
      await api(url, '/v1/sessions', { model: { name: BEDROCK_MODEL, api: 'anthropic' } })
    ).session_id as string
    mock.enqueue(
      { text: 'lost', streamError: { type: 'overloaded_error', message: 'Bedrock is busy' } },
      { text: 'Hello from Bedrock.' },
    )
    const turn = (await api(url, `/v1/sessions/${id}/turns`, { input: 'Hello' })) as unknown as Turn
    expect(turn.status, JSON.stringify(turn.events)).toBe('completed')
    expect(items(turn)).toMatchObject([{ type: 'agent_message', text: 'Hello from Bedrock.' }])
    mock.assertDone()
  })
})

describe('Claude on Vertex AI', () => {
  it('trades the service account JWT for a token and streams a thinking tool loop', async () => {
    const keyPath = join(dir, 'service-account.json')
    await writeFile(keyPath, JSON.stringify(vertex.keyFile))
    const url = await start({
      TURNLINE_ANTHROPIC_PLATFORM: 'vertex',
      ANTHROPIC_VERTEX_PROJECT_ID: 'turnline-test',
      CLOUD_ML_REGION: 'us-east5',
      ANTHROPIC_VERTEX_BASE_URL: vertex.baseURL,
      GOOGLE_APPLICATION_CREDENTIALS: keyPath,
    })
    const [first, second] = await toolLoop(url, VERTEX_MODEL)
    expect(vertex.refused).toEqual([])
    expect(first?.status, JSON.stringify(first?.events)).toBe('completed')
    expect(second?.status).toBe('completed')
    expect(vertex.accepted).toEqual(
      Array(3).fill(
        `/v1/projects/turnline-test/locations/us-east5/publishers/anthropic/models/${VERTEX_MODEL}:streamRawPredict`,
      ),
    )
    // One token, cached across the session's requests.
    expect(vertex.issued).toHaveLength(1)
    expect(messagesOf(2).map((m) => [m.role, m.content.map((b) => b.type)])).toEqual([
      ['user', ['text']],
      ['assistant', ['thinking', 'tool_use']],
      ['user', ['tool_result']],
      ['assistant', ['thinking', 'text']],
      ['user', ['text']],
    ])
    mock.assertDone()
  })

  it('refuses to start with a credentials file that is not one', async () => {
    const keyPath = join(dir, 'not-a-key.json')
    await writeFile(keyPath, JSON.stringify({ type: 'service_account', client_email: 'x' }))
    const server = startNodeEntry({
      PORT: '0',
      TURNLINE_DATA_DIR: join(dir, 'data-bad'),
      TURNLINE_ANTHROPIC_PLATFORM: 'vertex',
      ANTHROPIC_VERTEX_PROJECT_ID: 'turnline-test',
      CLOUD_ML_REGION: 'us-east5',
      GOOGLE_APPLICATION_CREDENTIALS: keyPath,
    })
    servers.push(server)
    expect(await server.exited).not.toBe(0)
    expect(server.output()).toMatch(
      /GOOGLE_APPLICATION_CREDENTIALS: .* is not a service account key/,
    )
  })
})
