import { createServer, request as httpRequest, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * What the AWS Lambda Node.js runtime gives a response-streaming handler, written after the
 * runtime interface client (aws-lambda-ric 4.0.2, `dist/utils/globals.js`,
 * `dist/stream/response-stream.js`, `dist/stream/http-response-stream.js`):
 *
 * - the global `awslambda.streamifyResponse(handler)` marks the handler as streaming and returns
 *   it; the runtime then calls `handler(event, responseStream, context)`;
 * - `responseStream` is a chunked HTTP POST to the Runtime API's
 *   `/2018-06-01/runtime/invocation/<id>/response` with `Lambda-Runtime-Function-Response-Mode:
 *   streaming`: every write leaves the process as it is made;
 * - `awslambda.HttpResponseStream.from(stream, prelude)` sets the content type
 *   `application/vnd.awslambda.http-integration-response` and, before the first write, sends the
 *   JSON prelude (status, headers, cookies) and 8 NUL bytes.
 *
 * Here the Runtime API is a local HTTP server that records when each chunk arrives, so a test
 * sees exactly what a function URL in RESPONSE_STREAM mode would forward and when.
 */

/** The content type of a response that starts with the HTTP integration prelude. */
export const PRELUDE_CONTENT_TYPE = 'application/vnd.awslambda.http-integration-response'
/** What ends the prelude: 8 NUL bytes. */
export const DELIMITER = Buffer.alloc(8)

interface ResponseStream {
  write(chunk: string | Uint8Array, callback?: (error?: Error | null) => void): boolean
  end(callback?: () => void): void
  setContentType(type: string): void
  _onBeforeFirstWrite?: (write: (chunk: string | Uint8Array) => void) => void
  on(event: string, listener: (...args: unknown[]) => void): unknown
  once(event: string, listener: (...args: unknown[]) => void): unknown
  emit(event: string, ...args: unknown[]): boolean
  removeListener(event: string, listener: (...args: unknown[]) => void): unknown
  readonly writable: boolean
}

export type StreamingHandler = (
  event: unknown,
  responseStream: ResponseStream,
  context: unknown,
) => Promise<void>

const STREAMING = Symbol.for('turnline.test.lambda-streaming')

/** Installs `globalThis.awslambda` as the Node.js runtime does before loading the handler. */
export function installLambdaGlobals(): void {
  const globals = globalThis as { awslambda?: unknown }
  globals.awslambda = {
    streamifyResponse(handler: StreamingHandler): StreamingHandler {
      Object.assign(handler, { [STREAMING]: true })
      return handler
    },
    HttpResponseStream: {
      from(stream: ResponseStream, prelude: unknown): ResponseStream {
        stream.setContentType(PRELUDE_CONTENT_TYPE)
        const metadata = JSON.stringify(prelude)
        stream._onBeforeFirstWrite = (write) => {
          write(metadata)
          write(new Uint8Array(DELIMITER.length))
        }
        return stream
      },
    },
  }
}

export function isStreamingHandler(handler: unknown): handler is StreamingHandler {
  return typeof handler === 'function' && STREAMING in handler
}

export interface StreamedChunk {
  /** Milliseconds since the invocation began. */
  at: number
  bytes: Buffer
}

export interface StreamedInvocation {
  /** Content type the handler declared to the Runtime API. */
  contentType: string
  /** The HTTP integration prelude: what the function URL answers with. */
  prelude: { statusCode: number; headers: Record<string, string>; cookies: string[] }
  /** The body after the prelude. */
  body: string
  /** Body chunks as they reached the Runtime API, with their arrival times. */
  chunks: StreamedChunk[]
  /** Milliseconds from the start of the invocation until the response ended. */
  endedAt: number
}

/** Invokes a streaming handler once and collects what the Runtime API received. */
export async function invokeStreaming(
  handler: StreamingHandler,
  event: unknown,
  /**
   * The function's timeout as the context tells it (`getRemainingTimeInMillis`); default 300 s.
   * A function: what the context answers each time it is asked (the test plays the clock).
   */
  timeoutMs: number | (() => number) = 300_000,
): Promise<StreamedInvocation> {
  const started = performance.now()
  const arrivals: StreamedChunk[] = []
  let received: (request: IncomingMessage) => void = () => {}
  const done = new Promise<{ contentType: string; endedAt: number }>((resolve, reject) => {
    received = (request) => {
      if (request.headers['lambda-runtime-function-response-mode'] !== 'streaming') {
        reject(new Error('the response was not sent in streaming mode'))
      }
      request.on('data', (chunk: Buffer) => {
        arrivals.push({ at: performance.now() - started, bytes: chunk })
      })
      request.on('end', () =>
        resolve({
          contentType: String(request.headers['content-type'] ?? ''),
          endedAt: performance.now() - started,
        }),
      )
      request.on('error', reject)
    }
  })
  const runtimeApi = createServer((request, response) => {
    received(request)
    request.on('end', () => response.writeHead(202).end('{"status":"OK"}'))
  })
  await new Promise<void>((resolve) => runtimeApi.listen(0, '127.0.0.1', () => resolve()))
  try {
    const { port } = runtimeApi.address() as AddressInfo
    const stream = responseStream(port, 'invocation-1')
    const deadline = typeof timeoutMs === 'number' ? Date.now() + timeoutMs : 0
    const remaining = typeof timeoutMs === 'number' ? () => deadline - Date.now() : timeoutMs
    await handler(event, stream, {
      awsRequestId: 'invocation-1',
      functionName: 'turnline',
      getRemainingTimeInMillis: remaining,
    })
    const { contentType, endedAt } = await done
    return { contentType, endedAt, ...splitPrelude(arrivals) }
  } finally {
    runtimeApi.closeAllConnections()
    await new Promise<void>((resolve) => runtimeApi.close(() => resolve()))
  }
}

/**
 * A chunked POST to the Runtime API on 127.0.0.1:`port`, as the runtime's `createResponseStream`
 * builds it (also the bench's Lambda bootstrap's, bench/support/lambda/bootstrap.ts).
 */
export function responseStream(port: number, requestId: string): ResponseStream {
  const request = httpRequest({
    hostname: '127.0.0.1',
    port,
    method: 'POST',
    path: `/2018-06-01/runtime/invocation/${requestId}/response`,
    headers: {
      'Lambda-Runtime-Function-Response-Mode': 'streaming',
      'Content-Type': 'application/octet-stream',
      'Transfer-Encoding': 'chunked',
    },
  })
  // Nagle would merge small writes; the runtime's socket does not hold them back either.
  request.on('socket', (socket) => socket.setNoDelay(true))
  let first = true
  const stream = request as unknown as ResponseStream
  const write = request.write.bind(request) as (chunk: string | Uint8Array) => boolean
  stream.setContentType = (type) => {
    if (!first) throw new Error('Cannot set content-type, too late.')
    request.setHeader('Content-Type', type)
  }
  Object.assign(request, {
    write(chunk: string | Uint8Array, ...rest: unknown[]) {
      if (first) {
        first = false
        stream._onBeforeFirstWrite?.(write)
      }
      return (write as (...args: unknown[]) => boolean)(chunk, ...rest)
    },
  })
  return stream
}

function splitPrelude(
  arrivals: StreamedChunk[],
): Omit<StreamedInvocation, 'contentType' | 'endedAt'> {
  const all = Buffer.concat(arrivals.map((chunk) => chunk.bytes))
  const cut = all.indexOf(DELIMITER)
  if (cut < 0)
    throw new Error(`no prelude delimiter in the response: ${all.toString().slice(0, 200)}`)
  const prelude = JSON.parse(all.subarray(0, cut).toString()) as StreamedInvocation['prelude']
  const bodyStart = cut + DELIMITER.length
  // Chunks of the body only, with the prelude's bytes taken off the front.
  const chunks: StreamedChunk[] = []
  let offset = 0
  for (const chunk of arrivals) {
    const end = offset + chunk.bytes.length
    if (end > bodyStart) {
      chunks.push({ at: chunk.at, bytes: chunk.bytes.subarray(Math.max(0, bodyStart - offset)) })
    }
    offset = end
  }
  return { prelude, body: all.subarray(bodyStart).toString(), chunks }
}

/** The host of the function URL the events are addressed to. */
export const LAMBDA_URL_HOST = 'abc123.lambda-url.us-east-1.on.aws'

/** A Lambda function URL event (payload format 2.0). */
export function urlEvent(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
) {
  const host = LAMBDA_URL_HOST
  const [rawPath = path, rawQueryString = ''] = path.split('?')
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers: { host, ...headers },
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abc123',
      domainName: host,
      domainPrefix: 'abc123',
      http: {
        method,
        path: rawPath,
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: 'test',
      },
      requestId: crypto.randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: '05/Dec/2026:00:00:00 +0000',
      timeEpoch: Date.now(),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    isBase64Encoded: false,
  }
}
