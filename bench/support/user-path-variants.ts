/**
 * The Turnline-process variants of bench/turn-cost-user.ts: a server started as a user starts it
 * (server-process.ts) with a client for its HTTP API, on the fs store or on S3 (moto) + Upstash
 * (the REST proxy over redis-server), the latter's requests counted from a process of their own
 * (store-peers.ts).
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SessionKeys } from '../../src/store/session-ref.ts'
import { requireServices } from '../../test/support/services.ts'
import { createTestBucket } from '../../test/support/test-bucket.ts'
import { type PeerProcesses, startStoreProcess } from './peer-processes.ts'
import { startServerProcess } from './server-process.ts'
import type { StoreTrips } from './store-peers.ts'
import { MODEL, TENANT, TOOL_MASTER_SECRET } from './turn-cost-scenario.ts'
import { httpClientVariant, storedBytes, type Variant, WORKSPACE } from './turnline-variants.ts'

const here = join(import.meta.dirname, '..', '..')

/** A variant and, when Turnline is its own process, that process's id. */
export interface Entry {
  variant: Variant
  pid?: number
  /**
   * The remote stores' requests since the last call, turn by turn, for turns that started at
   * `starts` (CLOCK_MONOTONIC, ms); what came before the first is dropped (S3 + Upstash only).
   */
  tripsByTurn?: (starts: number[]) => Promise<StoreTrips[]>
  /** Processes whose CPU per turn is reported apart: the stores' proxies, moto, redis. */
  others?: Record<string, number>
}

/**
 * What a bench's server is told beside its data folder and port: where the model is (the mock)
 * and the tool signing secret; everything else stays at its default.
 */
export function userServerEnv(modelBaseURL: string): Record<string, string> {
  return {
    OPENAI_BASE_URL: modelBaseURL,
    OPENAI_API_KEY: 'bench',
    TURNLINE_MODEL: MODEL,
    TURNLINE_TOOL_SECRET: TOOL_MASTER_SECRET,
  }
}

export async function serverEntry(
  name: string,
  peers: PeerProcesses,
  dir: string,
  cwd: string,
  argv: string[],
  nodeArgs: string[],
  extra: { env?: Record<string, string>; store?: ObjectStore; auth?: Record<string, string> } = {},
): Promise<Entry> {
  const server = await startServerProcess({
    cwd,
    argv: [...nodeArgs, ...argv],
    dir,
    env: { ...userServerEnv(peers.mock.baseURL), ...extra.env },
  })
  const kept = extra.store ?? new FsObjectStore({ root: join(dir, 'data') })
  const bytes = (sessionId: string) =>
    storedBytes(
      kept,
      new SessionKeys('', { tenant: TENANT, workspace: WORKSPACE, sessionId }).root,
      sessionId,
    )
  for (const line of server.output().split('\n')) {
    if (/WARNING|sandbox/i.test(line)) console.log(`${name}: ${line}`)
  }
  const client = httpClientVariant(name, server.url, peers, bytes, extra.auth)
  return { variant: { ...client, close: () => server.stop() }, pid: server.pid }
}

/** moto_server's and redis-server's process ids, as `npm run services:start` recorded them. */
export function servicePids(): Record<string, number> {
  const file = join(here, '.tmp/services.json')
  if (!existsSync(file)) return {}
  const pids = (JSON.parse(readFileSync(file, 'utf8')) as { pids?: Record<string, number> }).pids
  return Object.fromEntries(Object.entries(pids ?? {}).map(([name, pid]) => [name, pid]))
}

/**
 * The file in which `npm run services:start`'s moto notes each request (moto-server-lean.py), as
 * .tmp/services.json records it; services started before moto noted its requests have none.
 */
export function motoRequestLogPath(): string {
  const file = join(here, '.tmp/services.json')
  const info = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as { s3?: { requestLog?: string } })
    : {}
  const log = info.s3?.requestLog
  if (!log || !existsSync(log)) {
    throw new Error(
      'moto does not note its requests (no s3.requestLog in .tmp/services.json): restart the ' +
        'services with npm run services:stop && npm run services:start',
    )
  }
  return log
}

/** An API key of the bench's tenant, for the variant with per-tenant limits. */
const BENCH_API_KEY = 'bench-key-0123456789abcdef'

/**
 * Per-tenant limits high enough never to refuse a bench turn, so that every check runs: the
 * request window, the daily token quota (each model call's hold and settlement) and a turn slot.
 */
const TENANT_LIMITS = {
  TURNLINE_API_KEYS: `${BENCH_API_KEY}=${TENANT}`,
  TURNLINE_LIMIT_REQUESTS_PER_MINUTE: '1000000',
  TURNLINE_LIMIT_CONCURRENT_TURNS: '64',
  TURNLINE_LIMIT_TOKENS_PER_DAY: '1000000000000',
}

/**
 * A deployment's stores on the local services (`npm run services:start`): a bucket of its own on
 * moto and the Upstash REST proxy over redis-server, both counted from a process of their own
 * (store-peers.ts): moto notes the requests signed with an access key id of this deployment's
 * own; `env` is what a server is told of them.
 */
export async function countedS3Deployment(label: string, rttMs?: number) {
  const services = requireServices()
  const bucket = await createTestBucket(services.s3, label)
  const accessKeyId = `counted${process.pid}x${Date.now()}`
  const stores = await startStoreProcess({
    redisUrl: services.redisUrl,
    s3Endpoint: services.s3.endpoint,
    s3RequestLog: motoRequestLogPath(),
    s3AccessKeyId: accessKeyId,
    ...(rttMs ? { rttMs } : {}),
  })
  const env: Record<string, string> = {
    S3_BUCKET: bucket.bucket,
    S3_ENDPOINT: stores.s3Endpoint,
    S3_REGION: services.s3.region,
    S3_FORCE_PATH_STYLE: '1',
    S3_ACCESS_KEY_ID: accessKeyId,
    S3_SECRET_ACCESS_KEY: services.s3.secretAccessKey,
    UPSTASH_REDIS_REST_URL: stores.upstashUrl,
    UPSTASH_REDIS_REST_TOKEN: stores.upstashToken,
    // Each run is a deployment of its own (the namespace is claimed by one bucket).
    TURNLINE_REDIS_NAMESPACE: bucket.bucket.slice(-40),
  }
  return {
    env,
    stores,
    /** The bucket, read directly (with the services' own access key id: not counted). */
    store: () => bucket.store(''),
    async close() {
      await stores.close()
      await bucket.destroy()
    },
  }
}

/**
 * `npm start` on S3 (moto) + Upstash (the REST proxy over redis-server), both counted; with
 * `limits`, multi-tenant (an API key) with the per-tenant limits on, kept in Upstash too.
 */
export async function s3Entry(
  peers: PeerProcesses,
  dir: string,
  nodeArgs: string[],
  options: { limits?: boolean; rttMs?: number; cwd?: string; label?: string } = {},
): Promise<Entry> {
  const limits = options.limits ?? false
  const pids = servicePids()
  const deployment = await countedS3Deployment('usercost', options.rttMs)
  const rtt = options.rttMs ? `, RTT ${options.rttMs} ms` : ''
  const label = options.label ? ` [${options.label}]` : ''
  const name = `npm start, S3 (moto) + Upstash${limits ? ', tenant limits' : ''}${rtt}${label}`
  const cwd = options.cwd ?? here
  const entry = await serverEntry(name, peers, dir, cwd, ['infra/start.mjs'], nodeArgs, {
    env: {
      ...(limits
        ? { ...TENANT_LIMITS, TURNLINE_TOOL_ALLOWED_HOSTS: new URL(peers.toolUrl).host }
        : {}),
      ...deployment.env,
    },
    store: deployment.store(),
    auth: limits ? { authorization: `Bearer ${BENCH_API_KEY}` } : {},
  })
  const { stores } = deployment
  const close = entry.variant.close
  return {
    ...entry,
    tripsByTurn: (starts) => stores.tripsByTurn(starts),
    others: { 'store proxies': stores.pid, ...pids },
    variant: {
      ...entry.variant,
      async close() {
        await close()
        await deployment.close()
      },
    },
  }
}
