import type { Socket } from 'node:net'
import type { HttpBindings } from '@hono/node-server'
import { Hono } from 'hono'
import { cutConnection } from './cut-connection.ts'
import { serveApp } from './http-server.ts'

/**
 * A replay server for provider conformance: it answers each model request with the next recorded
 * reply — a stream of Server-Sent Events exactly as a provider frames it, or an error body — and
 * keeps every request it got, so a test can check what the adapter sent back. Any POST path is
 * served (`/v1/chat/completions`, `/v1/responses`, `/v1/messages`, …): the path is recorded and
 * a case may check it. A request with no reply left is answered 500 and fails `assertDone`.
 */

/** One SSE event: `data` as given (a string, e.g. `[DONE]`) or as JSON; `event:` when named. */
export type ReplayFrame = { event?: string; data: unknown } | { raw: string }

export interface ReplayReply {
  /** Default 200. */
  status?: number
  headers?: Record<string, string>
  /** A streamed answer. */
  frames?: ReplayFrame[]
  /** A JSON answer (an HTTP error body, or a non-streamed reply). */
  body?: unknown
  /** Drop the connection once the frames are written (a stream that breaks off). */
  cut?: boolean
}

export interface ReplayRequest {
  path: string
  body: Record<string, unknown>
  headers: Record<string, string>
}

export interface ProviderReplay {
  /** `http://127.0.0.1:<port>/v1`. */
  baseURL: string
  /** Queues replies, served in order. */
  serve(...replies: ReplayReply[]): void
  readonly requests: ReplayRequest[]
  /** Throws when a request found no reply or replies are left over. */
  assertDone(): void
  reset(): void
  close(): Promise<void>
}

/** The SSE text of one frame. */
export function sseFrame(frame: ReplayFrame): string {
  if ('raw' in frame) return frame.raw
  const data = typeof frame.data === 'string' ? frame.data : JSON.stringify(frame.data)
  return `${frame.event === undefined ? '' : `event: ${frame.event}\n`}data: ${data}\n\n`
}

export async function startProviderReplay(): Promise<ProviderReplay> {
  const queue: ReplayReply[] = []
  const requests: ReplayRequest[] = []
  const failures: string[] = []
  const app = new Hono<{ Bindings: HttpBindings }>()

  app.post('*', async (c) => {
    const raw = await c.req.text()
    let body: Record<string, unknown> = {}
    try {
      body = JSON.parse(raw) as Record<string, unknown>
    } catch {
      failures.push(`request body on ${c.req.path} is not JSON`)
    }
    requests.push({ path: c.req.path, body, headers: c.req.header() })
    const reply = queue.shift()
    if (!reply) {
      const message = `provider-replay: unexpected request #${requests.length} to ${c.req.path}`
      failures.push(message)
      return Response.json({ error: { message, type: 'replay_exhausted' } }, { status: 500 })
    }
    const status = reply.status ?? 200
    if (!reply.frames) return Response.json(reply.body ?? {}, { status, headers: reply.headers })
    const frames = reply.frames.map(sseFrame)
    const cutAfter = reply.cut ? frames.length : undefined
    return eventStream(frames, c.env.incoming.socket, cutAfter, { status, headers: reply.headers })
  })

  // Node's bindings (the socket, for `cut`) are what @hono/node-server passes as env.
  const server = await serveApp({
    fetch: (request: Request, env?: unknown) => app.fetch(request, env as HttpBindings),
  })
  return {
    baseURL: `${server.url}/v1`,
    serve: (...replies) => queue.push(...replies),
    requests,
    assertDone() {
      const problems = [...failures]
      if (queue.length > 0) problems.push(`${queue.length} recorded replies were never requested`)
      if (problems.length > 0) throw new Error(problems.join('; '))
    },
    reset() {
      queue.length = 0
      requests.length = 0
      failures.length = 0
    },
    close: () => server.close(),
  }
}

/**
 * SSE frames as a streamed response; after `cutAfter` frames the connection is dropped (the
 * socket of Node's bindings flushed and destroyed, `cutConnection`), as a provider stream
 * that breaks off.
 */
export function eventStream(
  frames: string[],
  socket: Socket,
  cutAfter: number | undefined,
  init: { status?: number; headers?: Record<string, string> | undefined },
): Response {
  const encoder = new TextEncoder()
  let sent = 0
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const frame = frames[sent]
      if (sent === cutAfter || frame === undefined) {
        if (sent === cutAfter) await cutConnection(socket)
        controller.close()
        return
      }
      sent += 1
      controller.enqueue(encoder.encode(frame))
    },
  })
  return new Response(stream, {
    status: init.status ?? 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', ...init.headers },
  })
}
