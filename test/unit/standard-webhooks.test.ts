import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  isUsableWebhookSecret,
  standardWebhookHeaders,
  verifyStandardWebhook,
} from '../../src/contract/standard-webhooks.ts'

const RAW = Buffer.from('0123456789abcdef0123456789abcdef')
const WHSEC = `whsec_${RAW.toString('base64')}`

/** Signed independently of the library, with node:crypto. */
function signed(secret: Buffer, id: string, seconds: number, body: string): Headers {
  const mac = createHmac('sha256', secret).update(`${id}.${seconds}.${body}`).digest('base64')
  return new Headers({
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': `v1,bogus v1,${mac}`,
  })
}

const now = () => Math.floor(Date.now() / 1000)

describe('Standard Webhooks (standardwebhooks)', () => {
  it('accepts a whsec_ secret and a raw text secret, either of several signatures', () => {
    const body = '{"a":1}'
    const at = now()
    expect(
      verifyStandardWebhook({ secret: WHSEC, headers: signed(RAW, 'm1', at, body), body }),
    ).toEqual({ ok: true, id: 'm1', timestamp: at })
    const text = 'plain-text-secret-ü'
    const raw = Buffer.from(text, 'utf8')
    expect(
      verifyStandardWebhook({ secret: text, headers: signed(raw, 'm2', now(), body), body }).ok,
    ).toBe(true)
  })

  it('refuses a wrong signature, a changed body, a stale or future timestamp, missing headers', () => {
    const body = 'x'
    const reasons = [
      verifyStandardWebhook({
        secret: WHSEC,
        headers: signed(Buffer.from('other-secret'), 'm', now(), body),
        body,
      }),
      verifyStandardWebhook({ secret: WHSEC, headers: signed(RAW, 'm', now(), body), body: 'y' }),
      verifyStandardWebhook({ secret: WHSEC, headers: signed(RAW, 'm', now() - 301, body), body }),
      verifyStandardWebhook({ secret: WHSEC, headers: signed(RAW, 'm', now() + 301, body), body }),
      verifyStandardWebhook({ secret: WHSEC, headers: new Headers({ 'webhook-id': 'm' }), body }),
    ]
    for (const check of reasons) expect(check.ok).toBe(false)
  })

  it('refuses a timestamp header that is not unix seconds, though its number was signed', () => {
    // The library reads the header with parseInt and checks the signature of the number it read.
    const at = now()
    const body = '{"a":1}'
    const good = signed(RAW, 'm', at, body)
    expect(verifyStandardWebhook({ secret: WHSEC, headers: good, body })).toEqual({
      ok: true,
      id: 'm',
      timestamp: at,
    })
    for (const header of [`${at}x`, `${at}.9`, `${at}e0`, `0${at}`, `+${at}`, `${at} ${at}`]) {
      const headers = new Headers(good)
      headers.set('webhook-timestamp', header)
      expect(verifyStandardWebhook({ secret: WHSEC, headers, body }), header).toEqual({
        ok: false,
        reason: 'webhook-timestamp is not unix seconds',
      })
    }
  })

  it('finds each signature however several were joined: by spaces, or by commas', () => {
    const at = now()
    const body = '{"a":1}'
    const good = signed(RAW, 'm', at, body).get('webhook-signature')?.split(' ')[1] ?? ''
    // One header (the specification), two header lines joined by Node, Deno or workerd, and by a
    // Lambda function URL.
    for (const header of [
      `v1,bm90 ${good}`,
      `v1,bm90, ${good}`,
      `v1,bm90,${good}`,
      `v2,x,${good}`,
    ]) {
      const headers = signed(RAW, 'm', at, body)
      headers.set('webhook-signature', header)
      expect(verifyStandardWebhook({ secret: WHSEC, headers, body }).ok, header).toBe(true)
    }
    const wrong = signed(RAW, 'm', at, body)
    wrong.set('webhook-signature', 'v1,bm90,v2,bm90')
    expect(verifyStandardWebhook({ secret: WHSEC, headers: wrong, body })).toEqual({
      ok: false,
      reason: 'No matching signature found',
    })
  })

  it('signs what it verifies, and node:crypto agrees with the signature', () => {
    const nowMs = Date.now()
    const headers = standardWebhookHeaders({ secret: WHSEC, id: 'msg_9', body: 'hello', nowMs })
    expect(
      verifyStandardWebhook({ secret: WHSEC, headers: new Headers(headers), body: 'hello' }).ok,
    ).toBe(true)
    const seconds = Math.floor(nowMs / 1000)
    expect(headers['webhook-signature']).toBe(
      `v1,${createHmac('sha256', RAW).update(`msg_9.${seconds}.hello`).digest('base64')}`,
    )
  })

  it('knows which secrets it can use', () => {
    expect(isUsableWebhookSecret(WHSEC)).toBe(true)
    expect(isUsableWebhookSecret('any raw text secret')).toBe(true)
    expect(isUsableWebhookSecret('whsec_%%%not-base64%%%')).toBe(false)
    expect(isUsableWebhookSecret('whsec_')).toBe(false)
  })
})
