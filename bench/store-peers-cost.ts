/**
 * CPU per request of the S3 + Upstash variant's local stand-ins, apart from any server: the
 * requests of an ordinary tool turn (an Upstash EVAL, two create-only 3 KB PUTs, an Upstash
 * EVAL) sent in that order, one at a time, by the server's own clients (S3Rest and UpstashRest on
 * the node:http fetch), to moto_server directly (which notes each request in its request log,
 * read by the store peers' process) and through the store peers' process (store-peers.ts: the
 * Upstash REST proxy) to redis-server
 * (`npm run services:start`). Prints, per round, the CPU each process spent per "turn" (those 4
 * requests) — moto, the store peers' process, redis-server and this client — read from /proc.
 *
 *   npx tsx bench/store-peers-cost.ts [--turns 300] [--rounds 3] [--s3 <endpoint> --moto-pid <pid>]
 *     [--hashes node|web]
 *
 * `--s3` and `--moto-pid` point it at another moto_server (one started by hand with other
 * options), so two ways of running it can be compared in one sitting (its S3 requests are then
 * not counted: that moto notes none).
 */
import { parseArgs } from 'node:util'
import { nodeFetch } from '../adapters/node-http/node-fetch.ts'
import { nodeSigV4Hashes } from '../adapters/s3/node-sigv4-hashes.ts'
import { S3Rest } from '../adapters/s3/s3-rest.ts'
import { webCryptoHashes } from '../adapters/s3/sigv4.ts'
import { UpstashRest } from '../adapters/upstash/upstash-rest.ts'
import { requireServices } from '../test/support/services.ts'
import { createTestBucket } from '../test/support/test-bucket.ts'
import { startStoreProcess } from './support/peer-processes.ts'
import { treeCpuMs } from './support/process-tree-cpu.ts'
import { motoRequestLogPath, servicePids } from './support/user-path-variants.ts'

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '3' },
    s3: { type: 'string' },
    'moto-pid': { type: 'string' },
    hashes: { type: 'string', default: 'node' },
  },
})
const turns = Number(values.turns)
const services = requireServices()
const pids = servicePids()
const s3Endpoint = values.s3 ?? services.s3.endpoint
const motoPid = Number(values['moto-pid'] ?? pids.moto)
const s3 = { ...services.s3, endpoint: s3Endpoint }
const bucket = await createTestBucket(s3, 'peercost')
// Signed with a key of its own, which moto's request log counts (another moto, `--s3`, has none).
const accessKeyId = `peercost${process.pid}`
const stores = await startStoreProcess({
  redisUrl: services.redisUrl,
  s3Endpoint,
  s3RequestLog: values.s3 ? '/dev/null' : motoRequestLogPath(),
  s3AccessKeyId: accessKeyId,
})
const fetchOnNode = nodeFetch()
const objects = new S3Rest({
  bucket: bucket.bucket,
  region: s3.region,
  endpoint: stores.s3Endpoint,
  forcePathStyle: true,
  credentials: { accessKeyId, secretAccessKey: s3.secretAccessKey },
  fetch: fetchOnNode,
  hashes: values.hashes === 'web' ? webCryptoHashes : nodeSigV4Hashes,
})
const upstash = new UpstashRest({
  url: stores.upstashUrl,
  token: stores.upstashToken,
  fetch: fetchOnNode,
  attemptMs: 10_000,
})
// A script about the size of the coordinator's (≈ 1.5 KB), touching a few keys.
const SCRIPT = `${'-- '.padEnd(1400, 'x')}\nredis.call('HSET', KEYS[1], 'tip', ARGV[1])\nredis.call('PEXPIRE', KEYS[1], 60000)\nreturn redis.call('HGET', KEYS[1], 'tip')`
const body = new TextEncoder().encode('x'.repeat(3072))

let n = 0
async function turn(): Promise<void> {
  const id = `${process.pid}-${n++}`
  await upstash.send(['eval', SCRIPT, '1', `peercost:${id}`, id])
  for (const step of ['a', 'b']) {
    const answer = await objects.send({
      method: 'PUT',
      key: `s/${id}/${step}.json`,
      headers: { 'if-none-match': '*' },
      body,
    })
    await answer.arrayBuffer()
  }
  await upstash.send(['eval', SCRIPT, '1', `peercost:${id}`, id])
}

const roots = [motoPid, stores.pid, pids.redis ?? 0, process.pid]
const names = ['moto', 'store peers', 'redis-server', 'client']
for (let i = 0; i < 30; i++) await turn()
await stores.trips()
for (let round = 1; round <= Number(values.rounds); round++) {
  const before = treeCpuMs(roots)
  const started = performance.now()
  for (let i = 0; i < turns; i++) await turn()
  const wall = (performance.now() - started) / turns
  const after = treeCpuMs(roots)
  const cpu = names.map(
    (name, i) => `${name} ${(((after[i] ?? 0) - (before[i] ?? 0)) / turns).toFixed(2)}`,
  )
  const trips = await stores.trips()
  console.log(
    `round ${round}: CPU ms per turn: ${cpu.join(', ')}; wall ${wall.toFixed(2)} ms; ` +
      `requests per turn S3 ${(trips.s3 / turns).toFixed(2)}, Upstash ${(trips.upstash / turns).toFixed(2)}`,
  )
}
await stores.close()
await bucket.destroy().catch(() => {})
process.exit(0)
