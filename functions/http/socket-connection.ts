/**
 * A WebSocket as the protocol code sees it, whatever the runtime's server API (Node's `ws`,
 * `Deno.upgradeWebSocket`, Workers' `WebSocketPair`): the adapters turn their socket into a
 * SocketPeer and feed what arrives to the SocketSession the route made for that connection.
 */
export interface SocketPeer {
  /** Sends one text message; ignored once the socket is closing or closed. */
  send(text: string): void
  /** Closes the socket with a close code and a short reason (≤ 123 bytes). */
  close(code: number, reason: string): void
}

export interface SocketSession {
  /** One message from the client: text as a string, binary as bytes. */
  message(data: string | Uint8Array): void
  /** The socket closed, by either side (or failed): the session lets go of everything. */
  closed(): void
}

/** What the route hands the runtime for a request it accepts: the session, once it has a peer. */
export type SocketOpener = (peer: SocketPeer) => SocketSession

/**
 * Lets go of a session the app accepted for a connection that never opened (the runtime refused
 * the handshake): what the route reserved for it (the tenant's socket count) is released.
 */
export function abandon(open: SocketOpener): void {
  open({ send: () => {}, close: () => {} }).closed()
}

/** Close codes (RFC 6455 §7.4.1) the protocol uses. */
export const CLOSE = {
  normal: 1000,
  goingAway: 1001,
  policy: 1008,
  tooBig: 1009,
  internal: 1011,
} as const

/**
 * The upgrades the app accepted and the runtime has yet to carry out, by request. The route
 * (after authentication, the host guard and the request window, like any route) records the
 * session for its request and answers a placeholder; the runtime's fetch wrapper then takes it
 * and upgrades the connection itself, so no middleware ever handles the 101 response.
 */
export class SocketUpgrades {
  private readonly pending = new WeakMap<Request, SocketOpener>()

  accept(request: Request, opener: SocketOpener): void {
    this.pending.set(request, opener)
  }

  /** The session the app accepted for this request, once (undefined: answer the app's response). */
  take(request: Request): SocketOpener | undefined {
    const opener = this.pending.get(request)
    this.pending.delete(request)
    return opener
  }
}

/** Whether a request asks for a WebSocket (`Upgrade: websocket`, any case). */
export function wantsWebSocket(request: Request): boolean {
  return request.headers.get('upgrade')?.toLowerCase() === 'websocket'
}
