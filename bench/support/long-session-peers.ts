/**
 * The peers of bench/long-session.ts's server mode, each run in its own process by
 * peer-process.ts (`long-mock`, `long-receiver`): the workload of test/support/long-session.ts
 * over the wire. The mock of the OpenAI API answers a turn's first request with a call of
 * `lookup` (`{"q":"turn N"}`, N read from the turn's input `task N: …`), the request after the
 * tool's result with a short text, and a compaction's summary request with a summary; its usage
 * is estimated from the request's length, so compaction runs whenever the context fills. The
 * tool receiver checks each call's signature and answers `toolBytes` of prose, `bigBytes` on
 * every `bigEvery`-th turn. Each notes what it produced (the session's content) and the mock the
 * size of every request, which the bench asks for after each turn (`stats`).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { deriveTenantSecret } from '../../functions/tool-secrets.ts'
import { isSummaryRequest } from '../../test/support/compaction-engine.ts'
import { prose, seededRandom } from '../../test/support/compaction-histories.ts'
import { startMockOpenAI } from '../../test/support/mock-openai.ts'
import { standardWebhookValid } from '../../test/support/webhook-signature-check.ts'
import { TENANT, TOOL_MASTER_SECRET } from './turn-cost-scenario.ts'

/** What a peer saw since the bench last asked. */
export interface LongPeerStats {
  /** Bytes of the `messages` of each model request (JSON), summary requests included. */
  requests: number[]
  /** Bytes of content produced: the model's answers and call arguments, or the tool's answers. */
  content: number
  /** Tool calls answered with a valid signature (receiver), or summary requests (mock). */
  calls: number
}

const utf8 = (text: string) => new TextEncoder().encode(text).byteLength

export async function startLongMock() {
  const mock = await startMockOpenAI()
  const random = seededRandom(31)
  let stats: LongPeerStats = { requests: [], content: 0, calls: 0 }
  mock.respond((request) => {
    const messages = (request.body.messages ?? []) as { role: string; content?: unknown }[]
    stats.requests.push(JSON.stringify(messages).length)
    const last = messages.at(-1)
    const turn = /task (\d+):/.exec(
      [...messages].reverse().find((m) => m.role === 'user' && typeof m.content === 'string')
        ?.content as string,
    )?.[1]
    if (isSummaryRequest(request)) {
      stats.calls += 1
      return { text: `Summary at turn ${turn}: ${prose(random, 40)}` }
    }
    if (last?.role === 'user') {
      const args = JSON.stringify({ q: `turn ${turn}` })
      stats.content += utf8(args)
      return { toolCalls: [{ name: 'lookup', arguments: args }] }
    }
    const text = `done ${turn}: ${prose(random, 30)}`
    stats.content += utf8(text)
    return { text }
  })
  return {
    url: mock.baseURL,
    take(): LongPeerStats {
      const taken = stats
      stats = { requests: [], content: 0, calls: 0 }
      mock.requests.length = 0
      return taken
    },
    close: () => mock.close(),
  }
}

export async function startLongReceiver(options: {
  toolBytes: number
  bigEvery: number
  bigBytes: number
}) {
  const secret = await deriveTenantSecret(TOOL_MASTER_SECRET, TENANT)
  const random = seededRandom(32)
  // A text of its own each call, as test/support/long-session.ts's: equal answers would be
  // stored once (artifacts are keyed by their content) and flatter the figures.
  const filler = (bytes: number) => {
    const text = prose(random, 400)
    return text.repeat(Math.ceil(bytes / text.length)).slice(0, bytes)
  }
  let stats: LongPeerStats = { requests: [], content: 0, calls: 0 }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      if (!standardWebhookValid(secret, req.headers, raw)) {
        res.writeHead(401, { 'content-type': 'text/plain' })
        res.end('bad signature')
        return
      }
      const args = (JSON.parse(raw) as { arguments?: { q?: string } }).arguments
      const turn = Number(/turn (\d+)/.exec(args?.q ?? '')?.[1] ?? 0)
      const big = options.bigEvery > 0 && turn > 0 && turn % options.bigEvery === 0
      const body = filler(big ? options.bigBytes : options.toolBytes)
      stats.calls += 1
      stats.content += utf8(body)
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': utf8(body) })
      res.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/tool`,
    take(): LongPeerStats {
      const taken = stats
      stats = { requests: [], content: 0, calls: 0 }
      return taken
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
