import { connect, createServer, type Server, type Socket } from 'node:net'

/**
 * A real TCP proxy in front of a local service (moto_server, the Upstash REST proxy) that can be
 * frozen: while frozen it accepts connections and bytes but forwards nothing in either
 * direction, as a stopped process would (the kernel still accepts, nobody answers). Thawing
 * forwards what was held. Freezing a proxy only affects the clients that go through it, so other
 * tests sharing the service are not disturbed.
 */
export interface FreezableProxy {
  /** `http://127.0.0.1:<port>` */
  url: string
  /**
   * Stops forwarding: `both` directions (a stopped service), or only `replies` (requests reach
   * the service and take effect, their answers are lost in transit).
   */
  freeze(what?: 'both' | 'replies'): void
  thaw(): void
  /** Drops every open connection at once (both sides), as a network fault would. */
  cut(): void
  /** Connections accepted so far. */
  readonly connections: number
  /**
   * Requests clients have sent since the last freeze: chunks that begin an HTTP/1.1 request
   * line or a RESP command (both clients write a request's head in one chunk). Lets a test wait
   * for a resend instead of sleeping for it.
   */
  readonly requestsSinceFreeze: number
  close(): Promise<void>
}

interface Pipe {
  from: Socket
  to: Socket
  held: Buffer[]
  reply: boolean
}

export async function startFreezableProxy(target: string): Promise<FreezableProxy> {
  const { hostname, port } = new URL(target)
  let frozen: 'none' | 'both' | 'replies' = 'none'
  let connections = 0
  let requestsSinceFreeze = 0
  const startsRequest = (chunk: Buffer) =>
    chunk[0] === 0x2a /* '*': a RESP command */ ||
    /^[A-Z]+ \S+ HTTP\/1\.[01]\r\n/.test(chunk.subarray(0, 2048).toString('latin1'))
  const blocked = (pipe: Pipe) => frozen === 'both' || (frozen === 'replies' && pipe.reply)
  const pipes = new Set<Pipe>()
  const sockets = new Set<Socket>()

  const forward = (pipe: Pipe) => {
    if (blocked(pipe) || pipe.to.destroyed) return
    for (const chunk of pipe.held.splice(0)) pipe.to.write(chunk)
  }
  const link = (from: Socket, to: Socket, reply: boolean) => {
    const pipe: Pipe = { from, to, held: [], reply }
    pipes.add(pipe)
    from.on('data', (chunk: Buffer) => {
      if (!reply && startsRequest(chunk)) requestsSinceFreeze += 1
      pipe.held.push(chunk)
      forward(pipe)
    })
    from.on('end', () => {
      if (!blocked(pipe)) to.end()
    })
    from.on('close', () => {
      pipes.delete(pipe)
      if (!blocked(pipe)) to.destroy()
    })
    from.on('error', () => to.destroy())
  }

  const server: Server = createServer((client) => {
    connections += 1
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    const upstream = connect(Number(port), hostname)
    sockets.add(upstream)
    upstream.on('close', () => sockets.delete(upstream))
    link(client, upstream, false)
    link(upstream, client, true)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('proxy has no port')

  return {
    url: `http://127.0.0.1:${address.port}`,
    freeze(what = 'both') {
      frozen = what
      requestsSinceFreeze = 0
    },
    thaw() {
      frozen = 'none'
      for (const pipe of pipes) forward(pipe)
    },
    cut() {
      for (const socket of sockets) socket.destroy()
    },
    get connections() {
      return connections
    },
    get requestsSinceFreeze() {
      return requestsSinceFreeze
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
