import { rm } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { importLambdaBundle } from '../support/lambda-bundle.ts'
import {
  invokeStreaming,
  isStreamingHandler,
  LAMBDA_URL_HOST,
  type StreamingHandler,
  urlEvent,
} from '../support/lambda-runtime.ts'
import { signMessage } from '../support/signed-callback.ts'
import {
  EMPTY_PROMPT,
  emptyDelivery,
  TIMESTAMP_NOT_SECONDS,
  timestampNotSeconds,
} from '../support/webhook-refusals.ts'

/**
 * Webhook deliveries on the Lambda bundle (loaded as the runtime loads it, invoked with function
 * URL events) get the answers Node, Deno and workerd give (http-webhooks.test.ts,
 * signed-routes.test.ts): a body that begins with a byte order mark is verified as the bytes
 * sent — as text, and base64-encoded as the function URL passes a body it takes for binary — the
 * signature is found among several header lines the function URL joined with a comma, a
 * timestamp header that is not unix seconds is 401, an empty prompt 400, a body past the cap
 * without Content-Length 413.
 */
const SECRET = `whsec_${Buffer.from('lambda-webhook-secret-0123456789').toString('base64')}`
const BODY_CAP = 65_536
let out = ''
let handler: StreamingHandler | undefined

beforeAll(async () => {
  const bundle = await importLambdaBundle({
    TURNLINE_STORE: 'memory',
    TURNLINE_SINGLE_TENANT: '1',
    TURNLINE_MODEL_PROVIDER: 'demo',
    TURNLINE_ALLOWED_HOSTS: LAMBDA_URL_HOST,
    TURNLINE_LOG: 'off',
    TURNLINE_MAX_BODY_BYTES: String(BODY_CAP),
    TURNLINE_WEBHOOKS: JSON.stringify({ triage: { secret: SECRET, tenant: 'local' } }),
  })
  out = bundle.out
  if (!isStreamingHandler(bundle.module.handler)) throw new Error('index.handler does not stream')
  handler = bundle.module.handler
  // The bundle is built, then loaded: under load on the shared machine that takes most of a minute.
}, 240_000)
afterAll(async () => {
  if (out) await rm(out, { recursive: true, force: true })
})

/** A delivery as the function URL hands it over: `body` as sent, or base64-encoded. */
async function deliver(message: { body: string; headers: Record<string, string> }, base64 = false) {
  if (!handler) throw new Error('the bundle is not loaded')
  const event = {
    ...urlEvent('POST', '/v1/webhooks/triage', message.headers),
    body: base64 ? Buffer.from(message.body).toString('base64') : message.body,
    isBase64Encoded: base64,
  }
  const answer = await invokeStreaming(handler, event)
  return { status: answer.prelude.statusCode, body: JSON.parse(answer.body) as unknown }
}

describe('webhook deliveries on the Lambda bundle', { timeout: 60_000 }, () => {
  it('verifies a body that begins with a byte order mark as the bytes sent', async () => {
    const text = signMessage(SECRET, '\uFEFF{"event":"push"}')
    expect(await deliver(text)).toMatchObject({ status: 200, body: { duplicate: false } })
    const binary = signMessage(SECRET, '\uFEFF{"event":"pull"}')
    expect(await deliver(binary, true)).toMatchObject({ status: 200, body: { duplicate: false } })
  })

  it('finds the signature among those of several header lines, joined by a bare comma', async () => {
    // Two `webhook-signature` lines, as the function URL hands them over (Node, Deno and
    // workerd join them with ", ").
    const message = signMessage(SECRET, '{"event":"rotated"}')
    const good = message.headers['webhook-signature']
    message.headers['webhook-signature'] = `v1,bm90LXRoaXMtb25l,${good}`
    expect(await deliver(message)).toMatchObject({ status: 200, body: { duplicate: false } })
  })

  it('refuses a timestamp header that is not unix seconds, its number signed', async () => {
    expect(await deliver(timestampNotSeconds(SECRET))).toEqual(TIMESTAMP_NOT_SECONDS)
  })

  it('refuses an empty prompt before anything runs', async () => {
    expect(await deliver(emptyDelivery(SECRET))).toEqual(EMPTY_PROMPT)
  })

  it('refuses a body past the cap that declares no length', async () => {
    const message = signMessage(SECRET, ' '.repeat(2 * BODY_CAP))
    expect(message.headers['content-length']).toBeUndefined()
    expect(await deliver(message)).toMatchObject({
      status: 413,
      body: { error: { code: 'payload_too_large', details: { max_bytes: BODY_CAP } } },
    })
  })
})
