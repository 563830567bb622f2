import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { DELIMITER, PRELUDE_CONTENT_TYPE, urlEvent } from '../../../test/support/lambda-runtime.ts'

/**
 * What AWS runs around one Lambda execution environment in bench/cold-start-platforms.ts, in the
 * bench's process: the function URL and the Runtime API. A request to `url` becomes a function
 * URL event (payload 2.0, test/support/lambda-runtime.ts) that waits until the function asks for
 * it (`GET /2018-06-01/runtime/invocation/next`), as a request that finds no warm instance waits
 * out the init; the function streams its answer to `POST …/invocation/<id>/response` (the
 * http-integration prelude, 8 NUL bytes, the body), and the request's client gets it as it
 * arrives: status and headers from the prelude, then the body. The bootstrap
 * (bootstrap.ts) reaches the Runtime API at 127.0.0.1:`runtimePort`.
 */
export interface LambdaFront {
  url: string
  runtimePort: number
  /** `performance.now()` when the function first asked for an invocation: its init done. */
  initEnded: Promise<number>
  /** Rejects when the function posts an init or invocation error. */
  failed: Promise<never>
  close(): Promise<void>
}

interface Invocation {
  id: string
  event: unknown
  client: ServerResponse
}

const listen = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  )

async function read(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString()
}

export async function startLambdaFront(): Promise<LambdaFront> {
  const queued: Invocation[] = []
  const waiting: ((invocation: Invocation) => void)[] = []
  const handedOut = new Map<string, Invocation>()
  let ended: (at: number) => void = () => {}
  const initEnded = new Promise<number>((resolve) => {
    ended = resolve
  })
  let fail: (error: Error) => void = () => {}
  const failed = new Promise<never>((_, reject) => {
    fail = reject
  })
  failed.catch(() => {})

  const front = createServer(async (request, client) => {
    // The function URL's own host stands, not this server's.
    const headers = Object.fromEntries(
      Object.entries(request.headers)
        .filter(([name]) => name !== 'host')
        .map(([name, value]) => [name, String(value)]),
    )
    const body = await read(request)
    const path = (request.url ?? '/').split('?')[0] ?? '/'
    const event = { ...urlEvent(request.method ?? 'GET', path, headers), body }
    const invocation = { id: crypto.randomUUID(), event, client }
    const taker = waiting.shift()
    if (taker) taker(invocation)
    else queued.push(invocation)
  })

  const runtime = createServer(async (request, answer) => {
    const path = request.url ?? ''
    if (request.method === 'GET' && path === '/2018-06-01/runtime/invocation/next') {
      ended(performance.now())
      const invocation =
        queued.shift() ?? (await new Promise<Invocation>((resolve) => waiting.push(resolve)))
      handedOut.set(invocation.id, invocation)
      answer.writeHead(200, {
        'content-type': 'application/json',
        'lambda-runtime-aws-request-id': invocation.id,
        'lambda-runtime-deadline-ms': String(Date.now() + 900_000),
        'lambda-runtime-invoked-function-arn':
          'arn:aws:lambda:us-east-1:000000000000:function:turnline',
      })
      answer.end(JSON.stringify(invocation.event))
      return
    }
    const response = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/response$/.exec(path)
    const invocation = response ? handedOut.get(response[1] ?? '') : undefined
    if (request.method === 'POST' && invocation) {
      if (request.headers['content-type'] !== PRELUDE_CONTENT_TYPE) {
        fail(new Error(`the function answered ${request.headers['content-type']}, not a prelude`))
      }
      forward(request, invocation.client, fail)
      request.on('end', () => answer.writeHead(202).end('{"status":"OK"}'))
      return
    }
    // /init/error, /invocation/<id>/error, or anything the bootstrap should not have called.
    const text = await read(request)
    fail(new Error(`the function called ${request.method} ${path}: ${text}`))
    answer.writeHead(202).end('{"status":"OK"}')
  })

  const [frontPort, runtimePort] = await Promise.all([listen(front), listen(runtime)])
  return {
    url: `http://127.0.0.1:${frontPort}`,
    runtimePort,
    initEnded,
    failed,
    async close() {
      for (const server of [front, runtime]) {
        server.closeAllConnections()
        await new Promise<void>((resolve) => server.close(() => resolve()))
      }
    },
  }
}

/** The streamed response to the client: the prelude's status and headers, then the body. */
function forward(request: IncomingMessage, client: ServerResponse, fail: (e: Error) => void) {
  let head: Buffer | undefined = Buffer.alloc(0)
  request.on('data', (chunk: Buffer) => {
    if (head === undefined) {
      client.write(chunk)
      return
    }
    head = Buffer.concat([head, chunk])
    const cut = head.indexOf(DELIMITER)
    if (cut < 0) return
    const prelude = JSON.parse(head.subarray(0, cut).toString()) as {
      statusCode: number
      headers: Record<string, string>
    }
    client.writeHead(prelude.statusCode, prelude.headers)
    client.write(head.subarray(cut + DELIMITER.length))
    head = undefined
  })
  request.on('end', () => {
    if (head === undefined) client.end()
    else fail(new Error('the response ended before its prelude'))
  })
}
