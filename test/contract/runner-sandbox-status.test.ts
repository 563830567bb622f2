import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { runnerSandbox } from '../../adapters/sandbox-http/runner-sandbox-status.ts'
import { signedHeaders } from '../../src/contract/runner-signature.ts'

/**
 * The server believes a runner's sandbox report only when it is signed with the shared secret
 * and answers this request's nonce: a process on the runner's address that claims bubblewrap
 * unsigned, signed with another secret, or with an old nonce is "unknown" (commands refused).
 */
const SECRET = 'status-runner-secret-0123456789'
let mode: 'unsigned' | 'other-secret' | 'old-nonce' | 'honest' = 'honest'
const server = createServer((req, res) => {
  let raw = ''
  req.on('data', (chunk: Buffer) => {
    raw += chunk.toString('utf8')
  })
  req.on('end', () => {
    const { nonce } = JSON.parse(raw) as { nonce: string }
    const text = JSON.stringify({
      type: 'sandbox.status',
      nonce: mode === 'old-nonce' ? 'a'.repeat(32) : nonce,
      sandbox: { isolation: 'bwrap', version: '0.9.0' },
    })
    const secret = mode === 'other-secret' ? 'another-secret-0123456789' : SECRET
    const headers = mode === 'unsigned' ? {} : signedHeaders(secret, text, Date.now())
    res.writeHead(200, { 'content-type': 'application/json', ...headers })
    res.end(text)
  })
})
let url = ''

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const ask = () => runnerSandbox({ url, secret: SECRET, fetch, now: Date.now })

it('believes a signed answer to its own nonce', async () => {
  mode = 'honest'
  expect(await ask()).toEqual({ known: true, sandbox: { isolation: 'bwrap', version: '0.9.0' } })
})

for (const forged of ['unsigned', 'other-secret', 'old-nonce'] as const) {
  it(`does not believe a claimed sandbox (${forged})`, async () => {
    mode = forged
    expect((await ask()).known).toBe(false)
  })
}
