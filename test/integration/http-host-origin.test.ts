import { mkdtemp, rm } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ServerProcess, startServerProcess } from '../support/server-process.ts'

/**
 * DNS rebinding and cross-site requests against the unauthenticated single-user server
 * (`npm start`'s entry, no keys, on loopback). A page the developer opens sends its own name as
 * `Host` once that name resolves to 127.0.0.1, and its own origin as `Origin`: both must get 403
 * on every route, so no session is created, no hook runs, nothing is listed. Requests addressed
 * to loopback (or a name the operator allowed) and from loopback pages pass.
 */
let server: ServerProcess
let dir = ''
let port = ''

const HOOKED_SESSION = {
  workspace: 'rebind',
  hooks: [{ event: 'session_start', type: 'command', command: 'touch /tmp/turnline-rebound' }],
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-host-'))
  server = await startServerProcess({
    TURNLINE_DATA_DIR: dir,
    TURNLINE_LOG: 'off',
    TURNLINE_MODEL_PROVIDER: 'demo',
    TURNLINE_ALLOWED_HOSTS: 'dev.turnline.test',
    // The signed routes exist (and are checked by their signatures, not by Host).
    TURNLINE_RUNNER_URL: 'http://127.0.0.1:9',
    TURNLINE_RUNNER_SECRET: 'host-origin-runner-secret',
    TURNLINE_WEBHOOKS: JSON.stringify({
      triage: {
        secret: `whsec_${Buffer.from('host-origin-webhook-0123').toString('base64')}`,
        tenant: 'local',
      },
    }),
  })
  port = new URL(server.url).port
})
afterAll(async () => {
  await server?.stop()
  if (dir) await rm(dir, { recursive: true, force: true })
})

interface Answer {
  status: number
  body: string
}

/** One request with exactly these headers (fetch would not let a test set Host). */
function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
      },
      (response) => {
        let text = ''
        response.on('data', (chunk: Buffer) => {
          text += chunk.toString()
        })
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }))
        response.on('error', reject)
      },
    )
    request.on('error', reject)
    request.end(body)
  })
}

const loopback = () => ({ host: `127.0.0.1:${port}` })

/** Every route of the OpenAPI document, with its path parameters filled in. */
async function everyRoute(): Promise<{ method: string; path: string }[]> {
  const document = JSON.parse((await send('GET', '/v1/openapi.json', loopback())).body) as {
    paths: Record<string, Record<string, unknown>>
  }
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => ({
      method: method.toUpperCase(),
      path: path.replace(/\{[^}]+\}/g, 'session-0000'),
    })),
  )
}

const SIGNED = /^\/v1\/(runner\/callback|webhooks\/)/

describe('the unauthenticated server refuses what a foreign page sends', () => {
  it('a foreign Host gets 403 on POST /v1/sessions and every other route', async () => {
    const created = await send(
      'POST',
      '/v1/sessions',
      { host: `attacker.example:${port}` },
      JSON.stringify(HOOKED_SESSION),
    )
    expect(created.status).toBe(403)
    expect(JSON.parse(created.body)).toMatchObject({ error: { code: 'forbidden' } })

    const routes = await everyRoute()
    expect(routes.length).toBeGreaterThan(30)
    for (const { method, path } of routes) {
      if (SIGNED.test(path)) continue
      for (const host of [`attacker.example:${port}`, 'attacker.example', '127.0.0.1.nip.io']) {
        const answer = await send(method, path, { host }, method === 'POST' ? '{}' : undefined)
        expect({ method, path, host, status: answer.status }).toEqual({
          method,
          path,
          host,
          status: 403,
        })
      }
    }
    // Paths outside the document too (unknown routes, the viewer's assets).
    for (const path of ['/ui/viewer.js', '/nothing-here', '/']) {
      expect((await send('GET', path, { host: 'attacker.example' })).status).toBe(403)
    }
    // Nothing was created, no hook ran.
    const listed = await send('GET', '/v1/sessions', loopback())
    expect(listed.status).toBe(200)
    expect(JSON.parse(listed.body)).toMatchObject({ sessions: [] })
  })

  it('a foreign Origin gets 403 on every route, whatever the Host', async () => {
    const created = await send(
      'POST',
      '/v1/sessions',
      { ...loopback(), origin: 'http://attacker.example' },
      JSON.stringify(HOOKED_SESSION),
    )
    expect(created.status).toBe(403)
    for (const { method, path } of await everyRoute()) {
      if (SIGNED.test(path)) continue
      for (const origin of [
        'https://attacker.example',
        `http://attacker.example:${port}`,
        'null',
      ]) {
        const answer = await send(
          method,
          path,
          { ...loopback(), origin },
          method === 'POST' ? '{}' : undefined,
        )
        expect({ method, path, origin, status: answer.status }).toEqual({
          method,
          path,
          origin,
          status: 403,
        })
      }
    }
    const listed = await send('GET', '/v1/sessions', loopback())
    expect(JSON.parse(listed.body)).toMatchObject({ sessions: [] })
  })

  it('the signed routes still answer only to their signatures', async () => {
    const callback = await send('POST', '/v1/runner/callback', { host: 'attacker.example' }, '{}')
    expect(callback.status).toBe(401)
    const hook = await send('POST', '/v1/webhooks/triage', { host: 'tunnel.example' }, '{}')
    expect(hook.status).toBe(401)
  })
})

describe('requests addressed to this machine pass', () => {
  it('loopback names with any port, and the names TURNLINE_ALLOWED_HOSTS lists', async () => {
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      'localhost',
      `[::1]:${port}`,
      `LOCALHOST:${port}`,
      `dev.turnline.test:${port}`,
    ]) {
      const answer = await send('GET', '/v1/sessions', { host })
      expect({ host, status: answer.status }).toEqual({ host, status: 200 })
    }
  })

  it('a page of this machine (same site, any port) may POST; the CLI and scripts send no Origin', async () => {
    for (const origin of [
      `http://127.0.0.1:${port}`,
      `http://localhost:${port}`,
      'http://localhost:5173',
      `https://dev.turnline.test`,
    ]) {
      const answer = await send(
        'POST',
        '/v1/sessions',
        { ...loopback(), origin },
        JSON.stringify({ workspace: 'same-site' }),
      )
      expect({ origin, status: answer.status }).toEqual({ origin, status: 201 })
    }
    const plain = await send('POST', '/v1/sessions', loopback(), JSON.stringify({}))
    expect(plain.status).toBe(201)
  })
})
