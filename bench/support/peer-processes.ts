/**
 * The peers of bench/turn-cost-user.ts, each its own process (bench/support/peer-process.ts):
 * the mock of the OpenAI API and the tool receiver.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { createInterface, type Interface } from 'node:readline'
import { deriveTenantSecret } from '../../functions/tool-secrets.ts'
import type { LongPeerStats } from './long-session-peers.ts'
import type { StoreTrips } from './store-peers.ts'
import { type Endpoints, TENANT, TOOL_MASTER_SECRET } from './turn-cost-scenario.ts'

const repo = join(import.meta.dirname, '..', '..')

interface Peer {
  child: ChildProcess
  lines: Interface
  ready: { url: string; host?: string; token?: string; s3?: string }
}

async function startPeer(args: string[]): Promise<Peer> {
  const child = spawn(
    join(repo, 'node_modules/.bin/tsx'),
    ['bench/support/peer-process.ts', ...args],
    {
      cwd: repo,
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  )
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
  const [first] = (await once(lines, 'line')) as [string]
  return { child, lines, ready: JSON.parse(first) as Peer['ready'] }
}

async function ask(peer: Peer, line: string): Promise<string> {
  const answer = once(peer.lines, 'line') as Promise<[string]>
  peer.child.stdin?.write(`${line}\n`)
  return (await answer)[0]
}

export interface PeerProcesses extends Endpoints {
  /** The mock's and the receiver's process ids. */
  pids: { mock: number; receiver: number }
  /** Checks the mock saw no unexpected request, then drops what it recorded. */
  forget(): Promise<void>
  /** Tool calls the receiver answered with a valid signature so far. */
  toolCalls(): Promise<number>
  close(): Promise<void>
}

export async function startPeerProcesses(callsTool: boolean): Promise<PeerProcesses> {
  const [mock, receiver] = await Promise.all([
    startPeer(['mock', '--tool-calls', callsTool ? '1' : '0']),
    startPeer(['receiver']),
  ])
  return {
    callsTool,
    mock: { baseURL: mock.ready.url },
    toolUrl: receiver.ready.url,
    toolSecret: await deriveTenantSecret(TOOL_MASTER_SECRET, TENANT),
    pids: { mock: mock.child.pid as number, receiver: receiver.child.pid as number },
    async forget() {
      const answer = await ask(mock, 'forget')
      if (answer !== 'ok') throw new Error(`the mock answered: ${answer}`)
    },
    toolCalls: async () => Number(await ask(receiver, 'count')),
    close: () => closePeers([mock, receiver]),
  }
}

export interface LongSessionPeers {
  mockUrl: string
  toolUrl: string
  pids: { mock: number; receiver: number }
  /** What the mock and the receiver saw since the last call. */
  stats(): Promise<{ mock: LongPeerStats; receiver: LongPeerStats }>
  close(): Promise<void>
}

/** The mock and the tool receiver of bench/long-session.ts, each its own process. */
export async function startLongSessionPeers(workload: {
  toolBytes: number
  bigEvery: number
  bigBytes: number
}): Promise<LongSessionPeers> {
  const [mock, receiver] = await Promise.all([
    startPeer(['long-mock']),
    startPeer([
      'long-receiver',
      '--tool-bytes',
      String(workload.toolBytes),
      '--big-every',
      String(workload.bigEvery),
      '--big-bytes',
      String(workload.bigBytes),
    ]),
  ])
  const stats = async (peer: Peer) => JSON.parse(await ask(peer, 'stats')) as LongPeerStats
  return {
    mockUrl: mock.ready.url,
    toolUrl: receiver.ready.url,
    pids: { mock: mock.child.pid as number, receiver: receiver.child.pid as number },
    stats: async () => ({ mock: await stats(mock), receiver: await stats(receiver) }),
    close: () => closePeers([mock, receiver]),
  }
}

async function closePeers(peers: Peer[]): Promise<void> {
  for (const peer of peers) {
    const exited = once(peer.child, 'exit')
    peer.child.stdin?.end()
    await exited
  }
}

export interface StoreProcess {
  pid: number
  /** What the server is told: the S3 endpoint and the Upstash REST URL and token. */
  upstashUrl: string
  upstashToken: string
  s3Endpoint: string
  /** Requests and sequential round trips since the last call. */
  trips(): Promise<StoreTrips>
  /** The same, turn by turn, for turns that started at `starts` (store-peers.ts's tripsByTurn). */
  tripsByTurn(starts: number[]): Promise<StoreTrips[]>
  close(): Promise<void>
}

/** The Upstash REST proxy and the reader of moto's request log in their own process (store-peers.ts). */
export async function startStoreProcess(services: {
  redisUrl: string
  s3Endpoint: string
  /** moto's request log, and the access key id whose requests are counted. */
  s3RequestLog: string
  s3AccessKeyId: string
  /** Added to every request to either store (default 0). */
  rttMs?: number
}): Promise<StoreProcess> {
  const peer = await startPeer([
    'stores',
    '--redis',
    services.redisUrl,
    '--s3',
    services.s3Endpoint,
    '--s3-log',
    services.s3RequestLog,
    '--s3-key',
    services.s3AccessKeyId,
    '--rtt',
    String(services.rttMs ?? 0),
  ])
  return {
    pid: peer.child.pid as number,
    upstashUrl: peer.ready.url,
    upstashToken: peer.ready.token ?? '',
    s3Endpoint: peer.ready.s3 ?? '',
    trips: async () => JSON.parse(await ask(peer, 'trips')) as StoreTrips,
    tripsByTurn: async (starts) =>
      JSON.parse(await ask(peer, `turns ${JSON.stringify(starts)}`)) as StoreTrips[],
    close: () => closePeers([peer]),
  }
}
