/**
 * The part of the `ws` package (8.x) the Node entry's WebSocket server uses
 * (node-sockets.ts). `ws` ships JavaScript only and its typings are a separate package; this
 * declares just the subset used, as `ws` documents it.
 */
declare module 'ws' {
  import type { IncomingMessage } from 'node:http'
  import type { Duplex } from 'node:stream'

  export class WebSocket {
    static readonly OPEN: 1
    readonly readyState: 0 | 1 | 2 | 3
    send(data: string): void
    close(code?: number, reason?: string): void
    terminate(): void
    on(
      event: 'message',
      listener: (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => void,
    ): this
    on(event: 'close', listener: (code: number, reason: Buffer) => void): this
    on(event: 'error', listener: (error: Error) => void): this
  }

  export interface ServerOptions {
    noServer: true
    /** Largest message accepted; a larger one closes the socket with 1009. */
    maxPayload?: number
  }

  export class WebSocketServer {
    constructor(options: ServerOptions)
    handleUpgrade(
      request: IncomingMessage,
      socket: Duplex,
      head: Buffer,
      callback: (socket: WebSocket, request: IncomingMessage) => void,
    ): void
    close(): void
  }
}
