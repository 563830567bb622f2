import { attachStandardSocket, type SocketAcceptor } from './standard-sockets.ts'

/** Workers' socket pair (tsc here has no Workers types). */
declare const WebSocketPair: new () => { 0: WebSocket; 1: WebSocket }

/**
 * WebSocket upgrades on Workers: a `WebSocketPair`, the server end accepted and served here, the
 * client end returned in the 101 answer. Not hibernatable: the isolate stays with the connection
 * while it is open, as a streamed answer keeps it.
 */
export const workerSocketAcceptor: SocketAcceptor = (_request, open) => {
  const pair = new WebSocketPair()
  const server = pair[1] as WebSocket & { accept(): void }
  server.accept()
  attachStandardSocket(server, open)
  return new Response(null, { status: 101, webSocket: pair[0] } as ResponseInit)
}
