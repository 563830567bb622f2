import { createHmac, timingSafeEqual } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { standardWebhookHeaders } from '../../src/contract/standard-webhooks.ts'

/**
 * The receiver's check that docs/http-api.md gives for signed callbacks (and HTTP tools and
 * hooks, signed the same way), run as written: it accepts what the server signs and refuses,
 * without throwing, whatever a client puts in the headers.
 */
type Verified = (secret: string, headers: Record<string, string>, rawBody: string) => boolean

function documentedCheck(): Verified {
  const doc = readFileSync(new URL('../../docs/http-api.md', import.meta.url), 'utf8')
  const section = doc.slice(doc.indexOf('**Signature.** Every attempt is signed'))
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1]
  if (!code) throw new Error('http-api.md: the signature section has no js block')
  const body = code.replace(/^import .*\n/m, '')
  const make = new Function('createHmac', 'timingSafeEqual', `${body}\nreturn verified`)
  return make(createHmac, timingSafeEqual) as Verified
}

const SECRET = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90'
const BODY = '{"type":"turn.completed","data":{"result":"ok"}}'

describe("http-api.md's signature check", () => {
  const verified = documentedCheck()
  const signed = (nowMs = Date.now()) =>
    standardWebhookHeaders({ secret: SECRET, id: 'msg_1', body: BODY, nowMs })

  it("accepts the server's signature, also beside another, and refuses a changed or stale one", () => {
    const headers = signed()
    expect(verified(SECRET, headers, BODY)).toBe(true)
    const rotated = `v1,bm90IGl0 ${headers['webhook-signature']}`
    expect(verified(SECRET, { ...headers, 'webhook-signature': rotated }, BODY)).toBe(true)
    expect(verified(SECRET, headers, `${BODY} `)).toBe(false)
    expect(verified(SECRET, signed(Date.now() - 301_000), BODY)).toBe(false)
  })

  it('refuses, without throwing, a signature of the right length in characters but not in bytes', () => {
    const headers = signed()
    const given = headers['webhook-signature'].slice(3)
    // As Node hands a header's bytes over (latin1): one character, two bytes in UTF-8.
    const forged = `v1,\u00e9${given.slice(1)}`
    expect(forged.length).toBe(headers['webhook-signature'].length)
    expect(verified(SECRET, { ...headers, 'webhook-signature': forged }, BODY)).toBe(false)
  })
})
