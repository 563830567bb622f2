import {
  abandon,
  CLOSE,
  type SocketOpener,
  type SocketUpgrades,
  wantsWebSocket,
} from '../http/socket-connection.ts'
import type { FetchHandler } from './entry-app.ts'

/** Upgrades a request the app accepted: the runtime's 101 answer, its socket fed to `open`. */
export type SocketAcceptor = (request: Request, open: SocketOpener) => Response

/**
 * The entry's fetch with WebSocket upgrades, on runtimes whose server hands an upgrade request to
 * fetch (Deno, Workers): the app answers it first (authentication, host guard, limits, the
 * route); when the route accepted it (SocketUpgrades) the runtime upgrades the connection and its
 * 101 answer goes out instead of the app's placeholder, which no middleware ever sees.
 */
export function withSocketUpgrades(
  fetch: FetchHandler,
  upgrades: SocketUpgrades,
  accept: SocketAcceptor,
): FetchHandler {
  return async (request, bindings, ctx) => {
    const response = await fetch(request, bindings, ctx)
    if (!wantsWebSocket(request)) return response
    const open = upgrades.take(request)
    if (!open) return response
    try {
      return accept(request, open)
    } catch {
      // The runtime refused the handshake (a malformed upgrade request).
      abandon(open)
      return new Response('not a valid WebSocket handshake', { status: 400 })
    }
  }
}

/**
 * Serves a session on a Web-standard server-side WebSocket (Deno's, a Workers `WebSocketPair`
 * end once accepted): text messages as strings, binary ones as bytes, `closed` once on close or
 * error. Sends before the socket is open are dropped (the protocol sends only in answer).
 */
export function attachStandardSocket(socket: WebSocket, open: SocketOpener): void {
  socket.binaryType = 'arraybuffer'
  const session = open({
    send: (text) => {
      if (socket.readyState === 1) socket.send(text)
    },
    close: (code, reason) => closeQuietly(socket, code, reason),
  })
  let ended = false
  const end = () => {
    if (ended) return
    ended = true
    session.closed()
  }
  socket.addEventListener('message', (event: MessageEvent) => {
    const data: unknown = event.data
    if (typeof data === 'string') session.message(data)
    else session.message(data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(0))
  })
  socket.addEventListener('close', end)
  socket.addEventListener('error', () => {
    end()
    closeQuietly(socket, CLOSE.internal, 'connection error')
  })
}

function closeQuietly(socket: WebSocket, code: number, reason: string): void {
  try {
    socket.close(code, reason)
  } catch {
    // closed already
  }
}
