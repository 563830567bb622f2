import { type IncomingMessage, type Server, STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import type { WebSocket, WebSocketServer } from 'ws'
import {
  abandon,
  CLOSE,
  type SocketOpener,
  type SocketPeer,
  type SocketUpgrades,
} from '../http/socket-connection.ts'
import type { FetchHandler } from './entry-app.ts'

/** Bytes a frame may carry beyond the message limit the protocol checks (JSON's own overhead). */
const FRAME_SLACK = 64 * 1024

/**
 * WebSocket upgrades on Node's HTTP server, with the `ws` package. Node hands an upgrade request
 * to the server's `upgrade` event, not to the app; this asks the app anyway (the same fetch,
 * so the same authentication, host guard and limits, the peer address from the socket), then
 * upgrades the connection when the app accepted it (SocketUpgrades) or writes the app's answer
 * (401, 426, …) and closes it. `ws` closes a frame larger than the message limit plus a margin
 * with 1009; below that the protocol answers an oversized message with an error event. `ws` is
 * imported at the first upgrade, not at start (≈ 60 ms of CPU a server without sockets never
 * spends; docs/performance.md).
 */
export function serveSocketsOnNode(
  server: Server,
  fetch: FetchHandler,
  upgrades: SocketUpgrades,
  maxMessageBytes: number,
): void {
  let sockets: Promise<WebSocketServer> | undefined
  const socketServer = () =>
    (sockets ??= import('ws').then(
      (ws) => new ws.WebSocketServer({ noServer: true, maxPayload: maxMessageBytes + FRAME_SLACK }),
    ))
  server.on('upgrade', (incoming: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy())
    void upgrade(incoming, socket, head).catch(() => socket.destroy())
  })

  async function upgrade(incoming: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const sockets = await socketServer()
    const request = requestOf(incoming)
    const response = await fetch(request, { incoming })
    const open = upgrades.take(request)
    if (!open) {
      await writeResponse(socket, response)
      return
    }
    let opened = false
    // A handshake `ws` refuses (a bad Sec-WebSocket-Key, …) is answered 400 and never opens.
    socket.once('close', () => {
      if (!opened) abandon(open)
    })
    sockets.handleUpgrade(incoming, socket, head, (ws) => {
      opened = true
      attach(ws, open)
    })
  }
}

function requestOf(incoming: IncomingMessage): Request {
  const headers = new Headers()
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value === undefined) continue
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one)
  }
  const host = incoming.headers.host ?? 'localhost'
  return new Request(new URL(incoming.url ?? '/', `http://${host}`), {
    method: incoming.method ?? 'GET',
    headers,
  })
}

async function writeResponse(socket: Duplex, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer())
  const lines = [`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}`]
  response.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'transfer-encoding') lines.push(`${name}: ${value}`)
  })
  lines.push(`content-length: ${body.length}`, 'connection: close', '', '')
  socket.end(Buffer.concat([Buffer.from(lines.join('\r\n')), body]))
}

function attach(ws: WebSocket, open: SocketOpener): void {
  const peer: SocketPeer = {
    send: (text) => {
      if (ws.readyState === 1) ws.send(text)
    },
    close: (code, reason) => ws.close(code, reason),
  }
  const session = open(peer)
  let ended = false
  const end = () => {
    if (ended) return
    ended = true
    session.closed()
  }
  ws.on('message', (data, isBinary) => {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)
    session.message(isBinary ? new Uint8Array(bytes) : bytes.toString('utf8'))
  })
  ws.on('close', end)
  ws.on('error', () => {
    end()
    ws.close(CLOSE.internal, 'connection error')
  })
}
