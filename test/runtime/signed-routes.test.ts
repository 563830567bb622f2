import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chunkedPost } from '../support/chunked-post.ts'
import type { RuntimeProcess } from '../support/runtime-process.ts'
import { startDeno, startWorkerd } from '../support/runtimes.ts'
import { type SignedMessage, signedExitCallback, signMessage } from '../support/signed-callback.ts'
import {
  EMPTY_PROMPT,
  emptyDelivery,
  TIMESTAMP_NOT_SECONDS,
  timestampNotSeconds,
} from '../support/webhook-refusals.ts'

/**
 * The routes that authenticate by signature instead of a bearer key exist in every runtime as
 * soon as they are configured: the runner's exit callback (TURNLINE_RUNNER_URL and
 * TURNLINE_RUNNER_SECRET; a runner elsewhere calls back `<api>/v1/runner/callback`) with its
 * replay guard, and the automation webhooks (TURNLINE_WEBHOOKS).
 */
const RUNNER_SECRET = 'runtime-runner-secret-0123456789'
const WEBHOOK_SECRET = `whsec_${Buffer.from('runtime-webhook-secret-0123456789').toString('base64')}`
/** The body cap: a chunked delivery past it is refused without being read whole. */
const BODY_CAP = 65_536
const vars = {
  // Never called here: the callback route only needs the secret.
  TURNLINE_RUNNER_URL: 'http://127.0.0.1:9',
  TURNLINE_RUNNER_SECRET: RUNNER_SECRET,
  TURNLINE_WEBHOOKS: JSON.stringify({ triage: { secret: WEBHOOK_SECRET, tenant: 'local' } }),
  TURNLINE_MODEL_PROVIDER: 'demo',
  TURNLINE_SINGLE_TENANT: '1',
  TURNLINE_MAX_BODY_BYTES: String(BODY_CAP),
}

const runtimes: [string, () => Promise<RuntimeProcess>][] = [
  ['Deno', () => startDeno({ TURNLINE_STORE: 'memory', ...vars })],
  ['workerd', () => startWorkerd(vars)],
]

describe.each(runtimes)('%s: signed routes', (name, start) => {
  let runtime: RuntimeProcess | undefined

  beforeAll(async () => {
    runtime = await start()
  })
  afterAll(async () => {
    await runtime?.stop()
  })

  const post = (path: string, message: SignedMessage) => {
    if (!runtime) throw new Error(`${name} is not running`)
    return fetch(`${runtime.url}${path}`, {
      method: 'POST',
      ...message,
      signal: AbortSignal.timeout(15_000),
    })
  }
  const answer = async (response: Response) => ({
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
  })

  it('accepts a signed runner callback once and refuses its replay', async () => {
    if (!runtime) throw new Error(`${name} is not running`)
    const created = await fetch(`${runtime.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    expect(created.status, runtime.output()).toBe(201)
    const { session_id } = (await created.json()) as { session_id: string }

    const message = signedExitCallback(RUNNER_SECRET, session_id)
    expect(await answer(await post('/v1/runner/callback', message))).toEqual({
      status: 202,
      body: { resumed: false },
    })
    expect(await answer(await post('/v1/runner/callback', message))).toMatchObject({
      status: 401,
      body: { error: { code: 'unauthorized', details: { reason: 'replayed' } } },
    })
    const forged = signedExitCallback('another-secret-0123456789abcdef', session_id)
    expect(await answer(await post('/v1/runner/callback', forged))).toMatchObject({
      status: 401,
      body: { error: { details: { reason: 'bad_signature' } } },
    })
  })

  it('verifies automation webhook deliveries', async () => {
    const forged = signMessage(
      `whsec_${Buffer.from('not-the-webhook-secret-012345').toString('base64')}`,
      '{"event":"x"}',
    )
    const refused = await answer(await post('/v1/webhooks/triage', forged))
    expect(refused.status, JSON.stringify(refused.body)).toBe(401)
    const unknown = await answer(await post('/v1/webhooks/nobody', forged))
    expect(unknown.status).toBe(404)
  })

  it('verifies a delivery as the bytes sent, and refuses a malformed timestamp, an empty prompt and a long chunked body', async () => {
    // A body that begins with a byte order mark: signed as sent, so it verifies as sent.
    const bom = signMessage(WEBHOOK_SECRET, '\uFEFF{"event":"push"}')
    const accepted = await answer(await post('/v1/webhooks/triage', bom))
    expect(accepted.status, JSON.stringify(accepted.body)).toBeLessThan(300)
    const timestamp = timestampNotSeconds(WEBHOOK_SECRET)
    expect(await answer(await post('/v1/webhooks/triage', timestamp))).toEqual(
      TIMESTAMP_NOT_SECONDS,
    )
    // An empty body under the default prompt: no turn to run, refused before anything is recorded.
    const empty = emptyDelivery(WEBHOOK_SECRET)
    expect(await answer(await post('/v1/webhooks/triage', empty))).toEqual(EMPTY_PROMPT)
    // No Content-Length, and a body that never ends: counted as it arrives, refused once past
    // the cap, without waiting for the rest.
    if (!runtime) throw new Error(`${name} is not running`)
    const { headers } = signMessage(WEBHOOK_SECRET, '{}')
    const chunked = await chunkedPost(`${runtime.url}/v1/webhooks/triage`, headers, 2 * BODY_CAP)
    expect(chunked.status, chunked.text).toBe(413)
    expect(JSON.parse(chunked.text)).toMatchObject({
      error: { code: 'payload_too_large', details: { max_bytes: BODY_CAP } },
    })
  })
})
