import { connect, createServer, type Server, type Socket } from 'node:net'

/**
 * A real TCP proxy that cuts connections in the middle of an event stream: once a connection has
 * carried `framesBeforeCut` SSE `data:` lines towards the client, the proxy forwards a few bytes
 * of the next one (a torn frame) and destroys both sockets, as a load balancer's idle timeout or
 * a lost network would. It cuts `cuts` connections, then forwards everything untouched.
 */
export interface CuttingProxy {
  /** `http://127.0.0.1:<port>` */
  url: string
  /** Connections cut so far. */
  readonly cutsMade: number
  /** Connections accepted so far. */
  readonly connections: number
  /** What each connection sent towards the server (request lines and headers), in order. */
  readonly sent: string[]
  close(): Promise<void>
}

const MARK = Buffer.from('data: ')

export async function startCuttingProxy(
  target: string,
  options: {
    framesBeforeCut: number
    cuts: number
    /**
     * How long the frames before the cut travel alone before the torn frame and the cut. A
     * browser may drop bytes it has received but not yet handed to the page when the connection
     * breaks; a pause lets them reach the page, as they would on a line that dies a moment later.
     */
    cutDelayMs?: number
  },
): Promise<CuttingProxy> {
  const { hostname, port } = new URL(target)
  let cutsMade = 0
  let connections = 0
  const sockets = new Set<Socket>()
  const sent: string[] = []

  const server: Server = createServer((client) => {
    connections += 1
    const upstream = connect(Number(port), hostname)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => {
        client.destroy()
        upstream.destroy()
      })
    }
    const index = sent.push('') - 1
    client.on('data', (chunk: Buffer) => {
      sent[index] += chunk.toString('latin1')
      upstream.write(chunk)
    })
    client.on('end', () => upstream.end())
    upstream.on('end', () => client.end())
    let frames = 0
    upstream.on('data', (chunk: Buffer) => {
      if (cutsMade >= options.cuts) {
        client.write(chunk)
        return
      }
      let from = 0
      for (;;) {
        const at = chunk.indexOf(MARK, from)
        if (at < 0) break
        frames += 1
        if (frames > options.framesBeforeCut) {
          // Half of the next frame's first line reaches the client, then the line goes dead.
          cutsMade += 1
          upstream.pause()
          const whole = chunk.subarray(0, at)
          const torn = chunk.subarray(at, at + MARK.length + 3)
          client.write(whole, () => {
            setTimeout(() => {
              client.write(torn, () => {
                client.destroy()
                upstream.destroy()
              })
            }, options.cutDelayMs ?? 0)
          })
          return
        }
        from = at + MARK.length
      }
      client.write(chunk)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('proxy has no port')
  return {
    url: `http://127.0.0.1:${address.port}`,
    get cutsMade() {
      return cutsMade
    },
    get connections() {
      return connections
    },
    sent,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
