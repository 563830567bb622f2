import { describe, expect, it } from 'vitest'
import { keyedEntryEnv, useEntryWithMock } from '../support/entry-with-mock.ts'

/**
 * A model provider's error answer names the deployment's credentials: OpenAI echoes part of a
 * refused key, rate limits name the organization. The real Node entry over the mock OpenAI API
 * (which answers in OpenAI's error shape) must keep those out of every place a tenant reads the
 * failure: the turn's answer, its stream, the stored events and an exec run.
 */
const KEY = 'redaction-key-0123456789abcdef'
const fx = useEntryWithMock(
  'provider-redaction',
  keyedEntryEnv('provider-redaction', KEY, {
    OPENAI_API_KEY: 'sk-proj-SERVERSECRETabcdefghij1234WXYZ',
  }),
)
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
const REFUSED_KEY =
  'Incorrect API key provided: sk-proj-****WXYZ. You can find your API key at https://platform.openai.com/account/api-keys.'
const RATE_LIMIT =
  'Rate limit reached for gpt-4o-mini in organization org-SERVERORG123 on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.'
/** What none of the tenant's answers may hold. */
const SECRETS = ['WXYZ', 'sk-proj', 'SERVERORG123', 'SERVERSECRET']

const post = (path: string, body: unknown, extra: Record<string, string> = {}) =>
  fetch(`${fx.url}${path}`, {
    method: 'POST',
    headers: { ...headers, ...extra },
    body: JSON.stringify(body),
  })

function expectNoSecret(text: string) {
  for (const secret of SECRETS) expect(text).not.toContain(secret)
}

describe("a provider's error answer", () => {
  it('a refused key: the turn fails as auth without the key fragment, streamed or not, and stored', async () => {
    const created = await post('/v1/sessions', {})
    const { session_id: id } = (await created.json()) as { session_id: string }
    fx.mock.enqueue({ status: 401, code: 'invalid_api_key', message: REFUSED_KEY })
    const turn = await post(`/v1/sessions/${id}/turns`, { input: 'hi' })
    const answer = await turn.text()
    expect(answer).toContain('Model request failed: auth (HTTP 401)')
    expectNoSecret(answer)

    fx.mock.enqueue({ status: 401, code: 'invalid_api_key', message: REFUSED_KEY })
    const streamed = await post(
      `/v1/sessions/${id}/turns`,
      { input: 'hi' },
      { accept: 'text/event-stream' },
    )
    const frames = await streamed.text()
    expect(frames).toContain('event: turn.failed')
    expectNoSecret(frames)

    const events = await (await fetch(`${fx.url}/v1/sessions/${id}/events`, { headers })).text()
    expect(events.match(/"turn\.failed"/g)).toHaveLength(2)
    expectNoSecret(events)

    // The operator reads the provider's words, redacted, in one line per failed call.
    const logged = fx.server
      .output()
      .split('\n')
      .filter((line) => line.includes('"msg":"model request failed"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(logged).toHaveLength(2)
    expect(logged[0]).toMatchObject({
      level: 'warn',
      tenant: 'tenant-a',
      session: id,
      kind: 'auth',
      status: 401,
      provider_message: expect.stringContaining('Incorrect API key provided: [redacted]'),
    })
    expectNoSecret(JSON.stringify(logged))
  })

  it("a rate limit keeps the provider's words without the organization; an exec run the same", async () => {
    fx.mock.enqueue({ status: 429, code: 'insufficient_quota', message: RATE_LIMIT })
    const run = await (await post('/v1/exec', { prompt: 'hi' })).text()
    expect(run).toContain('Rate limit reached for gpt-4o-mini in organization [redacted]')
    expectNoSecret(run)
    fx.mock.enqueue({ status: 401, code: 'invalid_api_key', message: REFUSED_KEY })
    const refused = await (await post('/v1/exec', { prompt: 'hi' })).text()
    expect(refused).toContain('"stop_reason":"Model request failed: auth (HTTP 401)')
    expectNoSecret(refused)
  })
})
