import { createHmac } from 'node:crypto'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import { newNonce, signedHeaders } from '../../src/contract/runner-signature.ts'
import { startCallbackReceiver } from '../support/callback-receiver.ts'
import { type RunnerProcess, startRunnerProcess } from '../support/runner-process.ts'

const secret = 'signing-runner-secret-0123456789'
let root: string
let runner: RunnerProcess
let receiver: Awaited<ReturnType<typeof startCallbackReceiver>>

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'turnline-runner-signing-'))
  receiver = await startCallbackReceiver(secret)
  runner = await startRunnerProcess({ root, secret, callbackUrl: receiver.url })
})

afterAll(async () => {
  await runner?.stop()
  await receiver?.close()
  if (root) await rm(root, { recursive: true, force: true })
})

const scope = { tenant: 'acme', session_id: 'signing' }

function startBody(marker: string) {
  return JSON.stringify({
    ...scope,
    nonce: newNonce(),
    request_id: `req_${marker}`,
    tool_call_id: 'call_0',
    cmd: `touch ${marker}`,
    yield_time_ms: 100,
    max_output_bytes: 1024,
  })
}

async function post(url: string, body: string, headers: Record<string, string>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  })
  const text = await response.text()
  return { status: response.status, json: text ? JSON.parse(text) : undefined }
}

describe('requests to the runner', () => {
  it('are refused unsigned, expired, forged or replayed — and nothing runs', async () => {
    const url = `${runner.url}/v1/exec/start`
    const unsigned = startBody('ran_unsigned')
    expect(await post(url, unsigned, {})).toMatchObject({
      status: 401,
      json: { error: { code: 'unauthorized', details: { reason: 'missing' } } },
    })
    // The scheme before Standard Webhooks is no longer accepted.
    const legacy = startBody('ran_legacy')
    const ts = String(Math.floor(Date.now() / 1000))
    const mac = createHmac('sha256', secret).update(`${ts}.${legacy}`).digest('hex')
    expect(
      await post(url, legacy, { 'turnline-timestamp': ts, 'turnline-signature': `v1=${mac}` }),
    ).toMatchObject({ status: 401, json: { error: { details: { reason: 'missing' } } } })
    const old = startBody('ran_expired')
    expect(
      await post(url, old, await signedHeaders(secret, old, Date.now() - 600_000)),
    ).toMatchObject({
      status: 401,
      json: { error: { code: 'unauthorized', details: { reason: 'expired' } } },
    })
    const forged = startBody('ran_forged')
    expect(
      await post(url, forged, await signedHeaders('not-the-secret-at-all', forged, Date.now())),
    ).toMatchObject({ status: 401, json: { error: { details: { reason: 'bad_signature' } } } })
    const tampered = startBody('ran_tampered')
    const headers = await signedHeaders(secret, tampered, Date.now())
    expect(
      await post(url, tampered.replace('ran_tampered', 'ran_tamperex'), headers),
    ).toMatchObject({
      status: 401,
    })

    const body = startBody('ran_once')
    const signed = await signedHeaders(secret, body, Date.now())
    const first = await post(url, body, signed)
    expect(first.status).toBe(200)
    expect(first.json.exec_session_id).toMatch(/^run-/)
    expect(await post(url, body, signed)).toMatchObject({
      status: 401,
      json: { error: { details: { reason: 'replayed' } } },
    })

    // The accepted command has exited once its signed callback came: the refused ones, sent
    // before it, would have run by then too.
    await receiver.accepted(first.json.exec_session_id)
    const files = await readdir(join(root, 'acme', 'signing'))
    expect(files.filter((f) => f.startsWith('ran_')).sort()).toEqual(['ran_once'])
  })

  it('answer a well-signed but invalid body with 400, an unknown route with 404', async () => {
    const body = JSON.stringify({ ...scope, nonce: newNonce(), cmd: 'true' })
    const bad = await post(
      `${runner.url}/v1/exec/start`,
      body,
      await signedHeaders(secret, body, Date.now()),
    )
    expect(bad).toMatchObject({ status: 400, json: { error: { code: 'invalid_input' } } })
    expect(bad.json.error.message).toContain('request_id')
    const none = await post(`${runner.url}/v1/nope`, '{}', {})
    expect(none).toMatchObject({ status: 404, json: { error: { code: 'not_found' } } })
  })

  it('a client with the wrong secret gets a non-retryable runner_unavailable', async () => {
    const wrong = new HttpSandboxRunner({ url: runner.url, secret: 'wrong-secret-0123456789' })
    const error = await wrong
      .readFile({ tenant: 'acme', sessionId: 'signing' }, { path: 'x' })
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(isTurnlineError(error, 'runner_unavailable')).toBe(true)
    if (isTurnlineError(error)) {
      expect(error.retryable).toBe(false)
      expect(error.details).toMatchObject({ status: 401 })
    }
  })
})

describe('exit callbacks', () => {
  function callbackBody(overrides: Record<string, unknown> = {}) {
    return JSON.stringify({
      type: 'exec.exited',
      nonce: newNonce(),
      tenant: 'acme',
      session_id: 'signing',
      exec_session_id: 'run-0123456789abcdef',
      request_id: 'req_callback_test',
      tool_call_id: 'call_0',
      exit_code: 0,
      total_output_bytes: 0,
      spool_path: '.vtcode/context/tool_outputs/write_stdin_run-0123456789abcdef.txt',
      spool_complete: true,
      exited_at: Date.now(),
      attempt: 1,
      ...overrides,
    })
  }

  it('are accepted signed and fresh, once; refused unsigned, expired, forged, replayed or malformed', async () => {
    const body = callbackBody()
    const signed = await signedHeaders(secret, body, Date.now())
    expect((await post(receiver.url, body, signed)).status).toBe(204)
    expect((await post(receiver.url, body, signed)).status).toBe(401)
    expect((await post(receiver.url, callbackBody(), {})).status).toBe(401)
    const old = callbackBody()
    expect(
      (await post(receiver.url, old, await signedHeaders(secret, old, Date.now() - 400_000)))
        .status,
    ).toBe(401)
    const forged = callbackBody()
    expect(
      (
        await post(
          receiver.url,
          forged,
          await signedHeaders('forger-secret-000000', forged, Date.now()),
        )
      ).status,
    ).toBe(401)
    const malformed = callbackBody({ exit_code: 'zero' })
    expect(
      (await post(receiver.url, malformed, await signedHeaders(secret, malformed, Date.now())))
        .status,
    ).toBe(400)
    const reasons = receiver.received.slice(-6).map((r) => r.message ?? 'accepted')
    expect(reasons[0]).toBe('accepted')
    expect(reasons[1]).toContain('already received')
    expect(reasons[2]).toContain('missing')
    expect(reasons[3]).toContain('window')
    expect(reasons[4]).toContain('does not match')
    expect(reasons[5]).toContain('exit_code')
  })

  it('the runner sends one for a real command, verified by the receiver', async () => {
    const client = new HttpSandboxRunner({ url: runner.url, secret })
    const s = { tenant: 'acme', sessionId: 'signing-cb' }
    const started = await client.start(s, {
      requestId: 'req_callback_real',
      toolCallId: 'call_cb',
      cmd: 'printf abc; exit 5',
      tty: false,
      yieldTimeMs: 1000,
      maxOutputBytes: 1024,
    })
    if (!started.ok) throw new Error(started.refusal.message)
    const hit = await receiver.accepted(started.value.execSessionId)
    expect(hit.hmacValid).toBe(true)
    expect(hit.callback).toMatchObject({
      exit_code: 5,
      total_output_bytes: 3,
      tool_call_id: 'call_cb',
      attempt: 1,
    })
  })
})
