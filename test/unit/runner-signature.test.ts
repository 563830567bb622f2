import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  MemoryReplayGuard,
  signedHeaders,
  signRunnerMessage,
  verifyRunnerMessage,
} from '../../src/contract/runner-signature.ts'
import { execRequestId } from '../../src/core/sandbox/runner-request-id.ts'

const secret = 'runner-secret-0123456789'
const now = 1_800_000_000_000

function signed(body: string, at = now, key = secret) {
  const headers = signedHeaders(key, body, at)
  return {
    id: headers['webhook-id'],
    timestamp: headers['webhook-timestamp'],
    signature: headers['webhook-signature'],
  }
}

describe('runner signatures (Standard Webhooks)', () => {
  it('is base64 HMAC-SHA256 of "<id>.<timestamp>.<body>", as node:crypto computes it', () => {
    const body = '{"a":"é"}'
    const expected = createHmac('sha256', secret)
      .update(`msg_1.1800000000.${body}`)
      .digest('base64')
    expect(signRunnerMessage(secret, 'msg_1', '1800000000', body)).toBe(expected)
    expect(signedHeaders(secret, body, now, 'msg_1')).toEqual({
      'webhook-id': 'msg_1',
      'webhook-timestamp': '1800000000',
      'webhook-signature': `v1,${expected}`,
    })
    const fresh = signed(body)
    expect(fresh.id).toMatch(/^msg_[0-9a-f]{32}$/)
    expect(signed(body).id).not.toBe(fresh.id)
  })

  it('accepts a fresh signature, also with a rotated secret list or several signatures', async () => {
    const body = '{"x":1}'
    const headers = signed(body)
    expect(await verifyRunnerMessage({ secret, body, ...headers, nowMs: now + 299_000 })).toEqual({
      ok: true,
    })
    expect(
      await verifyRunnerMessage({
        secret: ['old-secret-abcdefgh', secret],
        body,
        ...headers,
        nowMs: now,
      }),
    ).toEqual({ ok: true })
    const both = { ...headers, signature: `v1,AAAA ${headers.signature}` }
    expect(await verifyRunnerMessage({ secret, body, ...both, nowMs: now })).toEqual({ ok: true })
    const bytes = new TextEncoder().encode(body)
    expect(await verifyRunnerMessage({ secret, body: bytes, ...headers, nowMs: now })).toEqual({
      ok: true,
    })
  })

  it.each([
    ['missing headers', { id: undefined, timestamp: undefined, signature: undefined }, 'missing'],
    ['a missing message id', { id: undefined }, 'missing'],
    ['a non-numeric timestamp', { timestamp: 'soon' }, 'malformed'],
    ['a signature of the wrong form', { signature: 'v1=abc' }, 'malformed'],
  ])('rejects %s', async (_label, override, reason) => {
    const body = '{}'
    const headers = { ...signed(body), ...override }
    const check = await verifyRunnerMessage({ secret, body, ...headers, nowMs: now })
    expect(check).toMatchObject({ ok: false, reason })
  })

  it('rejects an old or future timestamp, another body, another secret, another id', async () => {
    const body = '{"x":1}'
    const headers = signed(body)
    for (const nowMs of [now + 301_000, now - 301_000]) {
      expect(await verifyRunnerMessage({ secret, body, ...headers, nowMs })).toMatchObject({
        ok: false,
        reason: 'expired',
      })
    }
    expect(
      await verifyRunnerMessage({ secret, body: '{"x":2}', ...headers, nowMs: now }),
    ).toMatchObject({ ok: false, reason: 'bad_signature' })
    expect(
      await verifyRunnerMessage({ secret: 'another-secret-xyz', body, ...headers, nowMs: now }),
    ).toMatchObject({ ok: false, reason: 'bad_signature' })
    expect(
      await verifyRunnerMessage({ secret, body, ...headers, id: 'msg_other', nowMs: now }),
    ).toMatchObject({ ok: false, reason: 'bad_signature' })
  })

  it('accepts a message id once inside the window', async () => {
    const replay = new MemoryReplayGuard(() => now)
    const body = '{"nonce":"0123456789abcdef"}'
    const headers = signed(body)
    const check = () => verifyRunnerMessage({ secret, body, ...headers, nowMs: now, replay })
    expect(await check()).toEqual({ ok: true })
    expect(await check()).toMatchObject({ ok: false, reason: 'replayed' })
  })
})

describe('execRequestId', () => {
  it('is deterministic per (tenant, session, call, item) and differs otherwise', async () => {
    const key = { tenant: 't', sessionId: 's', toolCallId: 'call_0', itemId: 'item_3' }
    const id = await execRequestId(key)
    expect(id).toMatch(/^req_[0-9a-f]{40}$/)
    expect(await execRequestId({ ...key })).toBe(id)
    const others = await Promise.all([
      execRequestId({ ...key, tenant: 'u' }),
      execRequestId({ ...key, sessionId: 's2' }),
      execRequestId({ ...key, toolCallId: 'call_1' }),
      execRequestId({ ...key, itemId: 'item_7' }),
      // no ambiguity from separators inside the parts
      execRequestId({ tenant: 't|s', sessionId: '', toolCallId: 'call_0', itemId: 'item_3' }),
    ])
    expect(new Set([id, ...others]).size).toBe(6)
  })
})
