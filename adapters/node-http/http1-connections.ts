import { isIP, connect as netConnect, type Socket } from 'node:net'
import type { Transform } from 'node:stream'
import { connect as tlsConnect } from 'node:tls'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import { closesConnection, requestHead } from './http1-request-head.ts'
import { type ResponseHead, ResponseParser } from './http1-response-parser.ts'
import type { Hop } from './node-fetch-redirect.ts'
import { type BodySource, NodeResponseBody } from './node-response-body.ts'

/** A kept connection with nothing to do closes after this long (under Node servers' 5 s). */
const FREE_MS = 4_000
/** A connection with no data for this long fails its request, as undici's timeouts do. */
const IDLE_MS = 300_000
/** A request body up to this size goes out in one buffer with its head. */
const ONE_WRITE = 64 * 1024

/** What one request got back once its head arrived. */
export interface Answer {
  head: ResponseHead
  /** Null for an answer without a body (HEAD, 1xx, 204, 304). */
  body: NodeResponseBody | null
}

interface Free {
  socket: Socket
  forget(): void
}

const noop = () => {}

/**
 * HTTP/1.1 requests on kept-alive connections, one request at a time on each, straight on
 * `node:net` and `node:tls` sockets: the request written in one write (head and body), the
 * answer parsed as it comes (http1-response-parser.ts). What Node's HTTP client, its agent and
 * its message streams do per request besides costs ≈ 50 µs of CPU a request more
 * (docs/performance.md). Connections are kept per origin and reused last-in first-out; a kept
 * one is unreferenced (it does not hold the process open) and closes after 4 s with nothing to
 * do, or when the server closes it; TLS sessions are resumed per origin, as Node's HTTPS agent
 * does. A connection is kept only when the answer was read to its end, framed by its length or
 * chunks, with nothing after it, and neither side asked to close.
 */
export class Http1Connections {
  private readonly free = new Map<string, Free[]>()
  private readonly sessions = new Map<string, Buffer>()

  /**
   * Sends `hop`; resolves once the answer's head is in. Rejects with
   * `TypeError('fetch failed', { cause })` when no answer came, with the signal's reason when it
   * aborts first; after the head, a broken connection errors the body (`TypeError('terminated')`)
   * and an abort errors it with the signal's reason.
   */
  send(hop: Hop, signal: AbortSignal | undefined): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const head = requestHead(hop)
      const key = originOf(hop.url)
      const socket = this.take(hop.url, key)
      let answered = false
      let written = false
      let over = false
      let body: NodeResponseBody | null = null
      let decoder: Transform | undefined
      let reusable = !closesConnection(hop)

      const onAbort = () => (over ? body?.fail(signal?.reason) : end(signal?.reason, true))
      const stopAbort = () => signal?.removeEventListener('abort', onAbort)
      let detach = noop
      /** Ends the exchange: kept for the next request, or closed with `error` told. */
      const end = (error: unknown, aborted = false) => {
        if (over) return
        over = true
        detach()
        // An answer with a body stops listening for the abort when its body ends.
        if (body === null) stopAbort()
        if (error === undefined && reusable && written && !socket.destroyed) {
          this.keep(socket, key)
          return
        }
        socket.destroy()
        if (error === undefined) return
        if (!answered) reject(aborted ? error : new TypeError('fetch failed', { cause: error }))
        else if (aborted) body?.fail(error)
        else if (decoder !== undefined) decoder.destroy(error as Error)
        else body?.finish(error)
      }
      const parser = new ResponseParser(hop.method === 'HEAD', {
        head: (answer) => {
          answered = true
          reusable &&= answer.keepAlive && answer.status !== 101
          const source: BodySource = {
            pause: () => (over ? undefined : (decoder ?? socket).pause()),
            resume: () =>
              over && decoder === undefined ? undefined : (decoder ?? socket).resume(),
            close: () => {
              decoder?.destroy()
              end(new Error('the body was cancelled'), true)
            },
          }
          if (isEmpty(answer, hop)) {
            resolve({ head: answer, body: null })
            return
          }
          body = new NodeResponseBody(source, stopAbort)
          decoder = decoderFor(answer, body)
          resolve({ head: answer, body })
        },
        data: (chunk) => {
          if (decoder === undefined) body?.push(chunk)
          else if (!decoder.write(chunk)) {
            socket.pause()
            decoder.once('drain', () => (over ? undefined : socket.resume()))
          }
        },
        end: () => {
          if (decoder !== undefined) decoder.end()
          else body?.finish()
        },
      })
      const onData = (chunk: Buffer) => {
        try {
          parser.push(chunk)
        } catch (error) {
          end(error)
          return
        }
        if (parser.complete) {
          reusable &&= !parser.untilClose && !parser.trailing
          if (written || !reusable) end(undefined)
        }
      }
      const onClosed = () => {
        try {
          parser.closed()
          reusable = false
          end(undefined)
        } catch (error) {
          end(error)
        }
      }
      const onError = (error: Error) => end(error)
      const onTimeout = () =>
        end(new Error(`no data for ${IDLE_MS / 1000} s: the connection timed out`))

      signal?.addEventListener('abort', onAbort, { once: true })
      detach = listen(socket, {
        data: onData,
        end: onClosed,
        close: onClosed,
        error: onError,
        timeout: onTimeout,
      })
      socket.setTimeout(IDLE_MS)
      const afterWrite = (error?: Error | null) => {
        if (error) return
        written = true
        if (parser.complete && !over) end(undefined)
      }
      const sent = hop.body
      const length =
        sent === undefined
          ? 0
          : typeof sent === 'string'
            ? Buffer.byteLength(sent)
            : sent.byteLength
      if (length <= ONE_WRITE) {
        // The head is latin1 with no character above 0xff (requestHead): a byte a character.
        const all = Buffer.allocUnsafe(head.length + length)
        all.write(head, 0, 'latin1')
        if (typeof sent === 'string') all.write(sent, head.length, 'utf8')
        else sent?.copy(all, head.length)
        socket.write(all, afterWrite)
      } else {
        socket.cork()
        socket.write(head, 'latin1')
        socket.write(sent as Buffer | string, afterWrite)
        socket.uncork()
      }
    })
  }

  /** A kept connection to the origin, else a new one. */
  private take(url: URL, key: string): Socket {
    const free = this.free.get(key)
    for (let kept = free?.pop(); kept !== undefined; kept = free?.pop()) {
      kept.forget()
      if (kept.socket.destroyed) continue
      kept.socket.ref()
      return kept.socket
    }
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
    const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80)
    let socket: Socket
    if (url.protocol === 'https:') {
      const session = this.sessions.get(key)
      const tls = tlsConnect({
        host,
        port,
        ALPNProtocols: ['http/1.1'],
        ...(isIP(host) === 0 ? { servername: host } : {}),
        ...(session === undefined ? {} : { session }),
      })
      tls.on('session', (next: Buffer) => this.sessions.set(key, next))
      tls.once('error', () => this.sessions.delete(key))
      socket = tls
    } else {
      socket = netConnect({ host, port })
    }
    socket.setNoDelay(true)
    socket.setKeepAlive(true, 1_000)
    // Errors are told by the request the connection carries, or drop it while it is kept.
    socket.on('error', noop)
    return socket
  }

  /** Keeps `socket` for the next request to its origin, until it closes or idles 4 s. */
  private keep(socket: Socket, key: string): void {
    let free = this.free.get(key)
    if (free === undefined) {
      free = []
      this.free.set(key, free)
    }
    const list = free
    const drop = () => {
      entry.forget()
      const at = list.indexOf(entry)
      if (at !== -1) list.splice(at, 1)
      socket.destroy()
    }
    const entry: Free = {
      socket,
      forget: listen(socket, { data: drop, end: drop, close: drop, timeout: drop }),
    }
    socket.setTimeout(FREE_MS)
    socket.resume()
    socket.unref()
    list.push(entry)
  }
}

/** Adds `listeners` to `socket`; the function returned takes them off again. */
function listen(socket: Socket, listeners: Record<string, (...args: never[]) => void>): () => void {
  for (const event in listeners) socket.on(event, listeners[event] as () => void)
  return () => {
    for (const event in listeners) socket.off(event, listeners[event] as () => void)
  }
}

function originOf(url: URL): string {
  return `${url.protocol}//${url.host}`
}

/** An answer that has no body whatever its headers say. */
function isEmpty(head: ResponseHead, hop: Hop): boolean {
  return hop.method === 'HEAD' || [101, 103, 204, 205, 304].includes(head.status)
}

/** A decompressor between the answer and its body, when it names a coding fetch decodes. */
function decoderFor(head: ResponseHead, body: NodeResponseBody): Transform | undefined {
  const coding = head.header('content-encoding')?.trim().toLowerCase()
  const decoder =
    coding === 'gzip' || coding === 'x-gzip'
      ? createGunzip()
      : coding === 'deflate'
        ? createInflate()
        : coding === 'br'
          ? createBrotliDecompress()
          : undefined
  if (decoder === undefined) return undefined
  decoder.on('data', (chunk: Buffer) => body.push(chunk))
  decoder.once('end', () => body.finish())
  decoder.once('error', (error) => body.finish(error))
  return decoder
}
