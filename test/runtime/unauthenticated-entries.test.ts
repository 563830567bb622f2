import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startNodeEntry } from '../support/node-entry.ts'
import type { RuntimeProcess } from '../support/runtime-process.ts'
import { startDeno, startWorkerd } from '../support/runtimes.ts'

/**
 * No entry serves unauthenticated on an address the world can reach. Without TURNLINE_API_KEYS
 * and without the key registry: a Worker answers every request 500 naming the setting, the Deno
 * entry does not start, the Node entry does not listen on anything but loopback — unless
 * TURNLINE_SINGLE_TENANT asks for it (and on Node and Deno even then only on loopback). The
 * Lambda entry's init failing is in lambda-stream.test.ts (it needs the built bundle).
 */
const SETTING = /TURNLINE_API_KEYS: not set[\s\S]*TURNLINE_SINGLE_TENANT=1/

describe('workerd without keys', () => {
  let worker: RuntimeProcess | undefined
  beforeAll(async () => {
    worker = await startWorkerd({ TURNLINE_MODEL_PROVIDER: 'demo' }, [], 500)
  })
  afterAll(async () => {
    await worker?.stop()
  })

  it('answers every request 500 naming the setting, never 2xx', async () => {
    if (!worker) throw new Error('workerd is not running')
    const requests: [string, string, string?][] = [
      ['POST', '/v1/sessions', '{}'],
      ['GET', '/v1/sessions'],
      ['POST', '/v1/exec', '{"prompt":"hi"}'],
      ['GET', '/healthz'],
      ['GET', '/ui'],
      ['GET', '/v1/openapi.json'],
    ]
    for (const [method, path, body] of requests) {
      const response = await fetch(`${worker.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body }),
      })
      const text = await response.text()
      expect({ path, status: response.status }).toEqual({ path, status: 500 })
      expect(JSON.parse(text)).toMatchObject({ error: { code: 'internal' } })
      expect(text).toMatch(SETTING)
    }
  })
})

describe('Deno without keys', () => {
  it('does not start, naming the setting', async () => {
    const started = startDeno({ TURNLINE_STORE: 'memory', TURNLINE_MODEL_PROVIDER: 'demo' })
    await expect(started).rejects.toThrow(/it exited \(code 1/)
    await expect(started).rejects.toThrow(SETTING)
  })
})

describe('Node without keys', () => {
  it('does not listen on a public address, TURNLINE_SINGLE_TENANT or not', async () => {
    const variants: Record<string, string>[] = [{}, { TURNLINE_SINGLE_TENANT: '1' }]
    for (const extra of variants) {
      const entry = startNodeEntry({
        HOST: '0.0.0.0',
        PORT: '0',
        TURNLINE_STORE: 'memory',
        TURNLINE_SANDBOX: 'off',
        ...extra,
      })
      expect(await entry.exited).toBe(1)
      expect(entry.output()).toMatch(/HOST: 0\.0\.0\.0 is not a loopback address/)
      expect(entry.output()).not.toMatch(/listening on/)
      await entry.stop()
    }
  })
})
