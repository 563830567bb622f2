/**
 * One peer of bench/turn-cost-user.ts as its own process, as a user's deployment has it: the
 * zero-latency mock of the OpenAI API (`mock`) or the signature-checking tool receiver
 * (`receiver`) of bench/support/turn-cost-scenario.ts. Prints one JSON line with its URL once it
 * listens; a line `forget` on stdin checks the mock saw no unexpected request and drops what it
 * recorded (answered `ok`); it exits when stdin closes.
 *
 *   tsx bench/support/peer-process.ts mock [--tool-calls 0|1]
 *   tsx bench/support/peer-process.ts receiver
 *   tsx bench/support/peer-process.ts long-mock | long-receiver --tool-bytes <n> --big-every <n>
 *     --big-bytes <n>   (long-session-peers.ts, for bench/long-session.ts; `stats` answers what
 *     each saw since the last `stats`)
 *   tsx bench/support/peer-process.ts stores --redis <url> --s3 <endpoint> --s3-log <file>
 *     --s3-key <access key id> [--rtt <ms>]   (store-peers.ts; prints the Upstash URL and token
 *     and the S3 endpoint; `trips` answers the round trips since the last call, `turns <JSON
 *     array of turn starts>` the same turn by turn)
 */
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { deriveTenantSecret } from '../../functions/tool-secrets.ts'
import { startMockOpenAI } from '../../test/support/mock-openai.ts'
import { startBenchToolReceiver } from './bench-tool-receiver.ts'
import { startLongMock, startLongReceiver } from './long-session-peers.ts'
import { startStorePeers } from './store-peers.ts'
import { mockReply, TENANT, TOOL_MASTER_SECRET } from './turn-cost-scenario.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'tool-calls': { type: 'string', default: '1' },
    redis: { type: 'string' },
    s3: { type: 'string' },
    's3-log': { type: 'string' },
    's3-key': { type: 'string' },
    rtt: { type: 'string', default: '0' },
    'tool-bytes': { type: 'string', default: '4096' },
    'big-every': { type: 'string', default: '0' },
    'big-bytes': { type: 'string', default: '0' },
  },
})
const callsTool = values['tool-calls'] !== '0'
const lines = createInterface({ input: process.stdin })

if (positionals[0] === 'mock') {
  const mock = await startMockOpenAI()
  const responder = (request: { body: Record<string, unknown> }) =>
    mockReply(request.body.messages, callsTool)
  mock.respond(responder)
  console.log(JSON.stringify({ url: mock.baseURL }))
  lines.on('line', (line) => {
    if (line !== 'forget') return
    try {
      mock.assertDone()
      console.log('ok')
    } catch (error) {
      console.log(JSON.stringify(String(error)))
    }
    mock.reset()
    mock.respond(responder)
  })
  lines.on('close', () => void mock.close().finally(() => process.exit(0)))
} else if (positionals[0] === 'receiver') {
  const receiver = await startBenchToolReceiver(
    await deriveTenantSecret(TOOL_MASTER_SECRET, TENANT),
  )
  console.log(JSON.stringify({ url: receiver.url, host: receiver.host }))
  lines.on('line', (line) => {
    if (line === 'count') console.log(String(receiver.validCalls()))
  })
  lines.on('close', () => void receiver.close().finally(() => process.exit(0)))
} else if (positionals[0] === 'stores') {
  const stores = await startStorePeers({
    redisUrl: values.redis ?? '',
    s3Endpoint: values.s3 ?? '',
    s3RequestLog: values['s3-log'] ?? '',
    s3AccessKeyId: values['s3-key'] ?? '',
    rttMs: Number(values.rtt),
  })
  const { upstashUrl, upstashToken, s3Endpoint } = stores
  console.log(JSON.stringify({ url: upstashUrl, token: upstashToken, s3: s3Endpoint }))
  lines.on('line', (line) => {
    if (line === 'trips') void stores.trips().then((trips) => console.log(JSON.stringify(trips)))
    if (line.startsWith('turns ')) {
      const starts = JSON.parse(line.slice('turns '.length)) as number[]
      void stores.tripsByTurn(starts).then((trips) => console.log(JSON.stringify(trips)))
    }
  })
  lines.on('close', () => void stores.close().finally(() => process.exit(0)))
} else if (positionals[0] === 'long-mock' || positionals[0] === 'long-receiver') {
  const peer =
    positionals[0] === 'long-mock'
      ? await startLongMock()
      : await startLongReceiver({
          toolBytes: Number(values['tool-bytes']),
          bigEvery: Number(values['big-every']),
          bigBytes: Number(values['big-bytes']),
        })
  console.log(JSON.stringify({ url: peer.url }))
  lines.on('line', (line) => {
    if (line === 'stats') console.log(JSON.stringify(peer.take()))
  })
  lines.on('close', () => void peer.close().finally(() => process.exit(0)))
} else {
  throw new Error('usage: peer-process.ts mock|receiver|stores|long-mock|long-receiver')
}
