import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/**
 * A real HTTP server in front of a real Turnline server that misbehaves on the requests a test
 * picks, as a broken server, proxy or network would: it answers them itself (a 429 with
 * Retry-After, an error page without end, an SSE line without end) or forwards them and stops
 * forwarding part way, the connection left open and silent. Every other request is forwarded
 * untouched. It records each request (method, path, headers, when it came).
 */
export interface SeenRequest {
  method: string
  path: string
  headers: IncomingMessage['headers']
  /** `Date.now()` when its head arrived. */
  at: number
  /** Its place among the requests so far (0 for the first). */
  index: number
}

/** What to do with one request: answer it on `res`; `forward()` sends it to the real server. */
export type Act = (res: ServerResponse, forward: () => Promise<Response>) => Promise<void>

export interface HostileFront {
  /** `http://127.0.0.1:<port>` */
  url: string
  readonly seen: SeenRequest[]
  close(): Promise<void>
}

export async function startHostileFront(
  target: string,
  pick: (request: SeenRequest) => Act | undefined,
): Promise<HostileFront> {
  const seen: SeenRequest[] = []
  const sockets = new Set<Socket>()
  const server = createServer((req, res) => {
    const request: SeenRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      at: Date.now(),
      index: seen.length,
    }
    seen.push(request)
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const forward = () => {
        const headers = new Headers()
        for (const [name, value] of Object.entries(req.headers)) {
          if (value === undefined || ['host', 'connection', 'accept-encoding'].includes(name))
            continue
          headers.set(name, Array.isArray(value) ? value.join(', ') : value)
        }
        const body = Buffer.concat(chunks)
        return fetch(`${target}${request.path}`, {
          method: request.method,
          headers,
          ...(body.length > 0 ? { body } : {}),
        })
      }
      const act = pick(request) ?? passThrough
      act(res, forward).catch(() => res.destroy())
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return {
    url: `http://127.0.0.1:${address.port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

/** Forwards the request and its whole answer. */
export const passThrough: Act = async (res, forward) => {
  const answer = await forward()
  writeHead(res, answer)
  const reader = answer.body?.getReader()
  for (;;) {
    const next = await reader?.read()
    if (!next || next.done) break
    res.write(next.value)
  }
  res.end()
}

/**
 * Forwards the request, then its answer's head and body until `bytes` of the body went out, then
 * nothing more: the connection stays open and silent (a stalled server or a dead line).
 */
export function stallAfter(bytes: number): Act {
  return async (res, forward) => {
    const answer = await forward()
    writeHead(res, answer)
    res.flushHeaders()
    if (!answer.body) return
    const reader = answer.body.getReader()
    let sent = 0
    while (sent < bytes) {
      const { value, done } = await reader.read()
      if (done) break
      const piece = value.subarray(0, bytes - sent)
      res.write(piece)
      sent += piece.length
    }
    await reader.cancel()
  }
}

/** Forwards the request, then its answer until `bytes` of the body went out, then drops the line. */
export function cutAfter(bytes: number): Act {
  const stall = stallAfter(bytes)
  return async (res, forward) => {
    await stall(res, forward)
    res.destroy()
  }
}

/** Answers with `status`, `headers` and `head`, then `piece` again and again while read. */
export function endless(
  status: number,
  headers: Record<string, string>,
  head: string,
  piece: string,
): Act {
  return async (res) => {
    res.writeHead(status, headers)
    res.write(head)
    const chunk = Buffer.from(piece.repeat(Math.max(1, Math.floor(65_536 / piece.length))))
    while (!res.destroyed) {
      if (!res.write(chunk)) {
        await new Promise<void>((resolve) => {
          res.once('drain', resolve)
          res.once('close', resolve)
        })
      }
    }
  }
}

/** Answers with `status`, `headers` and `body`. */
export function answer(status: number, headers: Record<string, string>, body: string): Act {
  return async (res) => {
    res.writeHead(status, headers)
    res.end(body)
  }
}

function writeHead(res: ServerResponse, answer: Response): void {
  const headers: Record<string, string> = {}
  answer.headers.forEach((value, name) => {
    if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name)) {
      headers[name] = value
    }
  })
  res.writeHead(answer.status, headers)
}
