import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Redis as IORedis } from 'ioredis'

/**
 * A small Upstash REST server in front of a real redis-server, speaking the protocol exactly as
 * `@upstash/redis` 1.39.0 uses it:
 * - `POST /` with one command as a JSON array → `{"result": …}`
 * - `POST /pipeline` with an array of commands → `[{"result": …} | {"error": "…"}, …]` (in order,
 *   not atomic)
 * - `POST /multi-exec` → the same array shape, executed as MULTI/EXEC
 * - `Upstash-Encoding: base64`: every string in a result base64-encoded (recursively in arrays),
 *   integers plain, nil null
 * - a wrong bearer token → 401 `{"error":"Unauthorized"}`; command errors → 400 `{"error":"…"}`
 * - every answer carries a new `upstash-sync-token` (`sync-1`, `sync-2`, …), as Upstash's do for
 *   read-your-writes; the token a request brought is noted with it
 *
 * Every request is counted so tests can measure round trips.
 */
export interface UpstashProxy {
  url: string
  token: string
  /** HTTP requests served (authorized or not) since start or the last `resetStats()`. */
  readonly requestCount: number
  /** Path and command names of every request since start or the last `resetStats()`. */
  readonly requests: readonly ProxiedRequest[]
  resetStats(): void
  close(): Promise<void>
}

export interface ProxiedRequest {
  path: string
  commands: string[]
  /** The request's `upstash-sync-token` header, when it had one. */
  syncToken?: string
}

export interface UpstashProxyOptions {
  redisUrl: string
  /** Bearer token clients must present; a random one when omitted. */
  token?: string
  /** Told of every request once its answer is written (benches count round trips with it). */
  observe?: (served: ServedRequest) => void
  /** Every request is answered this much later (a database that far away; default 0). */
  holdMs?: number
}

/** When a request arrived and when its answer was written (`performance.now()`), its body's size. */
export interface ServedRequest {
  from: number
  to: number
  bytes: number
}

type Arg = string | Buffer
type Command = [string, ...Arg[]]
type Reply = Buffer | string | number | null | Reply[] | Error | { [key: string]: Reply }
type Encoded = string | number | null | Encoded[]

const MAX_BODY_BYTES = 16 * 1024 * 1024

export async function startUpstashProxy(options: UpstashProxyOptions): Promise<UpstashProxy> {
  const token = options.token ?? crypto.randomUUID().replaceAll('-', '')
  const redis = new IORedis(options.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 })
  try {
    await redis.connect()
    await redis.ping()
  } catch (error) {
    redis.disconnect()
    throw new Error(`upstash proxy: cannot reach redis at ${options.redisUrl}`, { cause: error })
  }

  let requests: ProxiedRequest[] = []
  let syncTokens = 0
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error)
      if (!res.headersSent) send(res, 500, { error: `proxy failure: ${message}` })
      else res.destroy()
    })
  })

  const { observe, holdMs = 0 } = options
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const from = performance.now()
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    const body = await readBody(req)
    if (observe) {
      res.once('finish', () => observe({ from, to: performance.now(), bytes: body.byteLength }))
    }
    if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs))
    const brought = req.headers['upstash-sync-token']
    const entry: ProxiedRequest = {
      path,
      commands: [],
      ...(typeof brought === 'string' ? { syncToken: brought } : {}),
    }
    requests.push(entry)
    res.setHeader('upstash-sync-token', `sync-${++syncTokens}`)
    if (req.headers.authorization !== `Bearer ${token}`) {
      send(res, 401, { error: 'Unauthorized' })
      return
    }
    if (req.method !== 'POST') {
      send(res, 405, { error: 'ERR only POST is supported by this proxy' })
      return
    }
    const base64 = String(req.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64'
    const encode = (reply: Reply): Encoded => encodeReply(reply, base64)
    try {
      const parsed = parseJson(body.toString('utf8'))
      if (path === '/') {
        const command = toCommand(parsed)
        entry.commands.push(command[0])
        send(res, 200, { result: encode(await run(command)) })
      } else if (path === '/pipeline' || path === '/multi-exec') {
        const commands = toCommands(parsed)
        entry.commands.push(...commands.map((command) => command[0]))
        const replies =
          path === '/pipeline' ? await runPipeline(commands) : await runTransaction(commands)
        send(
          res,
          200,
          replies.map((reply) =>
            reply instanceof Error ? { error: reply.message } : { result: encode(reply) },
          ),
        )
      } else {
        send(res, 404, { error: `ERR unknown endpoint ${path}` })
      }
    } catch (error) {
      send(res, 400, { error: error instanceof Error ? error.message : String(error) })
    }
  }

  async function run([name, ...args]: Command): Promise<Reply> {
    return (await redis.callBuffer(name, ...args)) as Reply
  }

  // One connection executes commands in the order they were written: a pipeline stays ordered.
  async function runPipeline(commands: Command[]): Promise<Reply[]> {
    const settled = await Promise.allSettled(commands.map((command) => run(command)))
    return settled.map((s) => (s.status === 'fulfilled' ? s.value : asError(s.reason)))
  }

  async function runTransaction(commands: Command[]): Promise<Reply[]> {
    const multi = redis.multi()
    for (const [name, ...args] of commands) multi.callBuffer(name, ...args)
    const results = await multi.exec()
    if (results === null) throw new Error('EXECABORT Transaction discarded')
    return results.map(([error, value]) => (error ? asError(error) : (value as Reply)))
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    token,
    get requestCount() {
      return requests.length
    },
    get requests() {
      return requests
    },
    resetStats() {
      requests = []
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}

function encodeReply(reply: Reply, base64: boolean): Encoded {
  if (reply === null || reply === undefined) return null
  if (typeof reply === 'number') return reply
  if (typeof reply === 'string') return base64 ? Buffer.from(reply).toString('base64') : reply
  if (Buffer.isBuffer(reply)) return base64 ? reply.toString('base64') : reply.toString('utf8')
  if (Array.isArray(reply)) return reply.map((item) => encodeReply(item, base64))
  if (reply instanceof Error) return encodeReply(reply.message, base64)
  // ioredis turns HGETALL into an object; Upstash answers the flat field/value array.
  return Object.entries(reply).flatMap(([field, value]) => [
    encodeReply(field, base64),
    encodeReply(value, base64),
  ])
}

function toCommand(value: unknown): Command {
  if (!Array.isArray(value) || value.length === 0) {
    throw new Error('ERR a command must be a non-empty JSON array')
  }
  const parts = value.map((part: unknown) => {
    if (typeof part === 'string') return part
    if (typeof part === 'number' || typeof part === 'boolean') return String(part)
    if (part === null) throw new Error('ERR null is not a valid command argument')
    return JSON.stringify(part)
  })
  const [name, ...args] = parts
  if (name === undefined || name === '') throw new Error('ERR empty command name')
  return [name.toLowerCase(), ...args]
}

function toCommands(value: unknown): Command[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw new Error('ERR a pipeline must be a non-empty JSON array of commands')
  }
  return value.map(toCommand)
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body)
  } catch {
    throw new Error('ERR request body is not valid JSON')
  }
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason))
}

/** The request's body (by events: an async iterator over the request costs more per request). */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        req.destroy()
        reject(new Error('request body too large'))
      } else chunks.push(chunk)
    })
    req.once('end', () =>
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)),
    )
    req.once('error', reject)
  })
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  })
  res.end(text)
}
