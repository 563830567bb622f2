import { createPublicKey, randomBytes, verify } from 'node:crypto'
import type { HttpBindings } from '@hono/node-server'
import { Hono } from 'hono'
import { crc32 } from '../../adapters/anthropic/aws-event-stream.ts'
import { serveApp } from './http-server.ts'
import type { MockAnthropic } from './mock-anthropic.ts'
import { type SigV4Expectation, sigV4Problem } from './sigv4-verifier.ts'

/**
 * Local stand-ins for Claude on Amazon Bedrock and on Google Cloud Vertex AI, in front of the
 * mock Messages API (mock-anthropic.ts, which holds each request to the API's rules and scripts
 * the answer). Each checks what the platform checks before it forwards the request: Bedrock the
 * path (`/model/<id>/invoke-with-response-stream`), the body (no `model` or `stream`, its
 * `anthropic_version`) and the AWS Signature Version 4 of the request, verified independently
 * (sigv4-verifier.ts) — a bad signature is a 403 `InvalidSignatureException`; Vertex the path
 * (`…/projects/<p>/locations/<r>/publishers/anthropic/models/<m>:streamRawPredict`), the body,
 * and a bearer token its token endpoint issued for a service account JWT whose RS256 signature
 * it verified with the account's public key. Bedrock's answer is re-encoded the way Bedrock
 * streams it (AWS event stream messages carrying each event base64-encoded).
 */
export interface PlatformProblem {
  path: string
  problem: string
}

export interface MockBedrock {
  baseURL: string
  /** Requests refused, and why. */
  readonly refused: PlatformProblem[]
  /** Paths of requests that passed the checks. */
  readonly accepted: string[]
  /** Bodies as Bedrock received them (before they were forwarded). */
  readonly bodies: Record<string, unknown>[]
  close(): Promise<void>
}

/** Bedrock's exception for a Messages API error type (as mock-anthropic answers it). */
const EXCEPTION_OF: Readonly<Record<string, [string, number]>> = {
  invalid_request_error: ['ValidationException', 400],
  authentication_error: ['UnrecognizedClientException', 403],
  permission_error: ['AccessDeniedException', 403],
  not_found_error: ['ResourceNotFoundException', 404],
  rate_limit_error: ['ThrottlingException', 429],
  api_error: ['InternalServerException', 500],
  overloaded_error: ['ServiceUnavailableException', 503],
  timeout_error: ['ModelTimeoutException', 408],
}

function eventStreamMessage(headers: Record<string, string>, payload: Uint8Array): Uint8Array {
  const encoder = new TextEncoder()
  const parts: number[] = []
  for (const [name, value] of Object.entries(headers)) {
    const n = encoder.encode(name)
    const v = encoder.encode(value)
    parts.push(n.byteLength, ...n, 7, v.byteLength >> 8, v.byteLength & 0xff, ...v)
  }
  const headerBytes = Uint8Array.from(parts)
  const total = 12 + headerBytes.byteLength + payload.byteLength + 4
  const message = new Uint8Array(total)
  const view = new DataView(message.buffer)
  view.setUint32(0, total)
  view.setUint32(4, headerBytes.byteLength)
  view.setUint32(8, crc32(message.subarray(0, 8)))
  message.set(headerBytes, 12)
  message.set(payload, 12 + headerBytes.byteLength)
  view.setUint32(total - 4, crc32(message.subarray(0, total - 4)))
  return message
}

/** The SSE frames of a Messages API stream, as `{event, data}` pairs. */
async function* sseEvents(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<{ event: string; data: string }> {
  const decoder = new TextDecoder()
  let buffer = ''
  const reader = body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const frame = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const event = /^event: (.*)$/m.exec(frame)?.[1] ?? 'message'
      const data = /^data: (.*)$/m.exec(frame)?.[1] ?? ''
      yield { event, data }
    }
  }
}

/** Bedrock's answer of a forwarded Messages API answer: event stream, or its error. */
async function bedrockAnswer(answer: Response): Promise<Response> {
  if (!answer.ok) {
    const body = (await answer.json()) as { error?: { type?: string; message?: string } }
    const [exception, status] = EXCEPTION_OF[body.error?.type ?? ''] ?? [
      'InternalServerException',
      500,
    ]
    return Response.json(
      { message: body.error?.message ?? 'failed' },
      {
        status,
        headers: {
          'x-amzn-ErrorType': `${exception}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
        },
      },
    )
  }
  const events = sseEvents(answer.body as ReadableStream<Uint8Array>)
  const encoder = new TextEncoder()
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const next = await events.next()
        if (next.done) {
          controller.close()
          return
        }
        const { event, data } = next.value
        if (event === 'ping') continue
        if (event === 'error') {
          const error = (JSON.parse(data) as { error: { type: string; message: string } }).error
          const name = (EXCEPTION_OF[error.type]?.[0] ?? 'InternalServerException').replace(
            /^./,
            (c) => c.toLowerCase(),
          )
          controller.enqueue(
            eventStreamMessage(
              {
                ':exception-type': name,
                ':content-type': 'application/json',
                ':message-type': 'exception',
              },
              encoder.encode(JSON.stringify({ message: error.message })),
            ),
          )
          continue
        }
        const bytes = Buffer.from(data).toString('base64')
        controller.enqueue(
          eventStreamMessage(
            {
              ':event-type': 'chunk',
              ':content-type': 'application/json',
              ':message-type': 'event',
            },
            encoder.encode(JSON.stringify({ bytes, p: 'abcdefghij' })),
          ),
        )
        return
      }
    },
  })
  return new Response(stream, {
    headers: {
      'content-type': 'application/vnd.amazon.eventstream',
      'x-amzn-requestid': 'bedrock-req-1',
    },
  })
}

async function forward(mock: MockAnthropic, body: Record<string, unknown>, betas?: string) {
  return fetch(`${mock.baseURL}/v1/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': 'platform',
      ...(betas ? { 'anthropic-beta': betas } : {}),
    },
    body: JSON.stringify(body),
  })
}

export async function startMockBedrock(
  mock: MockAnthropic,
  expected: Omit<SigV4Expectation, 'service'>,
): Promise<MockBedrock> {
  const refused: PlatformProblem[] = []
  const accepted: string[] = []
  const bodies: Record<string, unknown>[] = []
  const app = new Hono<{ Bindings: HttpBindings }>()
  app.post('*', async (c) => {
    const url = new URL(c.req.url)
    const raw = new Uint8Array(await c.req.arrayBuffer())
    const refuse = (problem: string, exception: string, status: number) => {
      refused.push({ path: url.pathname, problem })
      return Response.json(
        { message: problem },
        { status, headers: { 'x-amzn-ErrorType': exception } },
      )
    }
    const problem = sigV4Problem(
      {
        method: 'POST',
        path: url.pathname,
        query: url.search.slice(1),
        headers: c.req.header(),
        body: raw,
      },
      { ...expected, service: 'bedrock' },
    )
    if (problem) return refuse(problem, 'InvalidSignatureException', 403)
    const route = /^\/model\/([^/]+)\/invoke-with-response-stream$/.exec(url.pathname)
    if (!route?.[1])
      return refuse(`unknown operation ${url.pathname}`, 'UnknownOperationException', 404)
    const body = JSON.parse(new TextDecoder().decode(raw)) as Record<string, unknown>
    bodies.push(body)
    const { anthropic_version, anthropic_beta, ...rest } = body
    if (anthropic_version !== 'bedrock-2023-05-31')
      return refuse(`anthropic_version ${String(anthropic_version)}`, 'ValidationException', 400)
    if ('model' in rest || 'stream' in rest)
      return refuse('model and stream are not body fields on Bedrock', 'ValidationException', 400)
    accepted.push(url.pathname)
    const betas = Array.isArray(anthropic_beta) ? anthropic_beta.join(',') : undefined
    return bedrockAnswer(
      await forward(mock, { ...rest, model: decodeURIComponent(route[1]), stream: true }, betas),
    )
  })
  const server = await serveApp({
    fetch: (request: Request, env?: unknown) => app.fetch(request, env as HttpBindings),
  })
  return { baseURL: server.url, refused, accepted, bodies, close: () => server.close() }
}

export interface MockVertex {
  baseURL: string
  /** The service account key file the deployment is given. */
  keyFile: Record<string, string>
  readonly refused: PlatformProblem[]
  readonly accepted: string[]
  /** Access tokens issued so far. */
  readonly issued: string[]
  close(): Promise<void>
}

const fromBase64Url = (text: string) =>
  Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64')

export async function startMockVertex(
  mock: MockAnthropic,
  expected: {
    projectId: string
    region: string
    clientEmail: string
    privateKeyPem: string
    publicKeyPem: string
  },
): Promise<MockVertex> {
  const refused: PlatformProblem[] = []
  const accepted: string[] = []
  const issued: string[] = []
  const publicKey = createPublicKey(expected.publicKeyPem)
  const app = new Hono<{ Bindings: HttpBindings }>()
  let tokenUri = ''
  const refuse = (path: string, problem: string, status: number) => {
    refused.push({ path, problem })
    return Response.json(
      {
        error: {
          code: status,
          message: problem,
          status: status === 401 ? 'UNAUTHENTICATED' : 'INVALID_ARGUMENT',
        },
      },
      { status },
    )
  }
  app.post('/token', async (c) => {
    const form = new URLSearchParams(await c.req.text())
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer')
      return refuse('/token', `grant_type ${form.get('grant_type')}`, 400)
    const [header, claims, signature] = (form.get('assertion') ?? '').split('.')
    if (!header || !claims || !signature) return refuse('/token', 'the assertion is not a JWT', 400)
    const valid = verify(
      'RSA-SHA256',
      Buffer.from(`${header}.${claims}`),
      publicKey,
      fromBase64Url(signature),
    )
    if (!valid) return refuse('/token', 'invalid_grant: the JWT signature does not verify', 400)
    const head = JSON.parse(fromBase64Url(header).toString()) as Record<string, unknown>
    const claim = JSON.parse(fromBase64Url(claims).toString()) as Record<string, unknown>
    const exp = Number(claim.exp)
    const iat = Number(claim.iat)
    if (head.alg !== 'RS256') return refuse('/token', `alg ${String(head.alg)}`, 400)
    if (claim.iss !== expected.clientEmail) return refuse('/token', `iss ${String(claim.iss)}`, 400)
    if (claim.aud !== tokenUri) return refuse('/token', `aud ${String(claim.aud)}`, 400)
    if (!String(claim.scope).split(' ').includes('https://www.googleapis.com/auth/cloud-platform'))
      return refuse('/token', `scope ${String(claim.scope)}`, 400)
    if (!(exp > iat && exp - iat <= 3600))
      return refuse('/token', 'exp must be within an hour of iat', 400)
    const token = `ya29.mock-${randomBytes(12).toString('hex')}`
    issued.push(token)
    return Response.json({ access_token: token, expires_in: 3599, token_type: 'Bearer' })
  })
  app.post('*', async (c) => {
    const url = new URL(c.req.url)
    const path = decodeURIComponent(url.pathname)
    const token = /^Bearer (.+)$/.exec(c.req.header('authorization') ?? '')?.[1]
    if (!token || !issued.includes(token))
      return refuse(path, 'Request had invalid authentication credentials.', 401)
    const route =
      /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):streamRawPredict$/.exec(
        path,
      )
    if (!route) return refuse(path, `unknown method ${path}`, 404)
    if (route[1] !== expected.projectId || route[2] !== expected.region)
      return refuse(path, `project ${route[1]} in ${route[2]}`, 403)
    const body = (await c.req.json()) as Record<string, unknown>
    const { anthropic_version, ...rest } = body
    if (anthropic_version !== 'vertex-2023-10-16')
      return refuse(path, `anthropic_version ${String(anthropic_version)}`, 400)
    if ('model' in rest) return refuse(path, 'model is not a body field on Vertex AI', 400)
    accepted.push(path)
    const answer = await forward(mock, { ...rest, model: route[3] }, c.req.header('anthropic-beta'))
    return new Response(answer.body, {
      status: answer.status,
      headers: { 'content-type': answer.headers.get('content-type') ?? 'application/json' },
    })
  })
  const server = await serveApp({
    fetch: (request: Request, env?: unknown) => app.fetch(request, env as HttpBindings),
  })
  tokenUri = `${server.url}/token`
  const keyFile = {
    type: 'service_account',
    project_id: expected.projectId,
    private_key_id: 'mock-key-1',
    private_key: expected.privateKeyPem,
    client_email: expected.clientEmail,
    token_uri: tokenUri,
  }
  return {
    baseURL: `${server.url}/v1`,
    keyFile,
    refused,
    accepted,
    issued,
    close: () => server.close(),
  }
}
