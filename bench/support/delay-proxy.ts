import { createServer as createHttpServer, request as httpRequest } from 'node:http'
import { createConnection, createServer, type Socket } from 'node:net'

/**
 * A TCP proxy on loopback that adds network distance: every chunk is held `rttMs / 2` in each
 * direction (order kept), and a new connection's first bytes wait one extra RTT (the TCP
 * handshake a real client pays before its request). So one HTTP or Redis request/response over a
 * kept-alive connection costs one RTT, as it does between a function and S3 or Upstash in the
 * same region. TLS handshakes are not modelled (kept-alive connections amortize them).
 */
export interface DelayProxy {
  /** `127.0.0.1:<port>` */
  host: string
  port: number
  /** Connections opened through the proxy so far. */
  readonly connections: number
  close(): Promise<void>
}

export async function startDelayProxy(target: { host: string; port: number }, rttMs: number) {
  const oneWay = rttMs / 2
  const sockets = new Set<Socket>()
  let connections = 0

  /** Forwards `from` → `to`, each chunk `delay` ms later than it arrived, never reordered. */
  function pipeDelayed(from: Socket, to: Socket, firstExtraMs: number): void {
    let last = 0
    let extra = firstExtraMs
    from.on('data', (chunk: Buffer) => {
      const due = Math.max(performance.now() + oneWay + extra, last)
      extra = 0
      last = due
      setTimeout(() => {
        if (!to.destroyed) to.write(chunk)
      }, due - performance.now())
    })
    from.on('end', () => {
      setTimeout(() => to.end(), Math.max(0, last - performance.now()))
    })
  }

  const server = createServer((client) => {
    connections += 1
    const upstream = createConnection({ host: target.host, port: target.port })
    client.setNoDelay(true)
    upstream.setNoDelay(true)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => {
        client.destroy()
        upstream.destroy()
      })
    }
    pipeDelayed(client, upstream, rttMs)
    pipeDelayed(upstream, client, 0)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('delay proxy: no port')
  return {
    host: `127.0.0.1:${address.port}`,
    port: address.port,
    get connections() {
      return connections
    },
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  } satisfies DelayProxy
}

/**
 * The same distance for an HTTP service whose local emulator closes every connection (moto's
 * server speaks HTTP/1.0-style, one request per connection, where S3 and Upstash keep
 * connections alive): clients keep their connection to this proxy alive, each request is held
 * `rttMs / 2` on the way in and on the way out, and the hop to the emulator adds nothing. So one
 * request costs one RTT, as against the real service over a warm connection.
 */
export interface HttpDelayProxy {
  url: string
  /** HTTP requests forwarded so far. */
  readonly requests: number
  close(): Promise<void>
}

export async function startHttpDelayProxy(target: string, rttMs: number): Promise<HttpDelayProxy> {
  const { hostname, port } = new URL(target)
  const oneWay = rttMs / 2
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
  let requests = 0
  const server = createHttpServer({ keepAlive: true }, async (req, res) => {
    requests += 1
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    await wait(oneWay)
    const upstream = httpRequest(
      { hostname, port, method: req.method, path: req.url, headers: req.headers },
      async (answer) => {
        const body: Buffer[] = []
        for await (const chunk of answer) body.push(chunk as Buffer)
        await wait(oneWay)
        const headers = { ...answer.headers }
        delete headers.connection
        delete headers['keep-alive']
        res.writeHead(answer.statusCode ?? 502, headers)
        res.end(Buffer.concat(body))
      },
    )
    upstream.on('error', (error) => {
      res.writeHead(502, { 'content-type': 'text/plain' })
      res.end(`delay proxy: ${error.message}`)
    })
    upstream.end(Buffer.concat(chunks))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('delay proxy: no port')
  return {
    url: `http://127.0.0.1:${address.port}`,
    get requests() {
      return requests
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
