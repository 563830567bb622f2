/**
 * bench/long-session.ts's default mode: the long-session workload (test/support/long-session.ts)
 * driven over HTTP against `npm start` in its own process (server-process.ts, started as
 * bench/turn-cost-user.ts starts it: default configuration, only the data folder, a free port,
 * the model's base URL and the tool secret given), with the mock of the OpenAI API and the tool
 * receiver each in a process of their own (long-session-peers.ts). Everything a turn's figures
 * hold is taken outside the server process: the turn's time by the client, the model request
 * sizes by the mock, the bytes written from the data folder on disk (disk-writes.ts); object
 * requests and coordinator calls by a second run of the same workload on a second server that
 * exports its traces (turn-span-counts.ts), so the timed run stays at the default configuration.
 */
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { TurnResponse } from '../../src/contract/api.ts'
import { prose, seededRandom } from '../../test/support/compaction-histories.ts'
import type { TurnSample } from '../../test/support/long-session.ts'
import { diskWatch } from './disk-writes.ts'
import { startLongSessionPeers } from './peer-processes.ts'
import { startServerProcess } from './server-process.ts'
import { lookupTool } from './turn-cost-scenario.ts'
import { startTurnSpanCounts, type TurnCalls } from './turn-span-counts.ts'
import { userServerEnv } from './user-path-variants.ts'

export interface ServerSessionOptions {
  /** A folder of the bench's own: each run's server keeps its data in a folder under it. */
  dir: string
  turns: number
  contextTokens: number
  toolBytes: number
  bigEvery: number
  bigBytes: number
  /** Also count object requests and coordinator calls (a second, traced run). */
  counts: boolean
  /** After each turn of the timed run, with its server's data folder. */
  onTurn?: (sample: TurnSample, sessionId: string, dataDir: string) => void | Promise<void>
  /** Lines the timed run's server printed about its sandbox or a warning; the runs' agreement. */
  notice?: (line: string) => void
}

interface Run {
  samples: TurnSample[]
  calls: TurnCalls[]
  dataDir: string
}

const utf8 = (text: string) => new TextEncoder().encode(text).byteLength

async function runOnce(options: ServerSessionOptions, name: string, traced: boolean): Promise<Run> {
  const dir = join(options.dir, name)
  await mkdir(dir, { recursive: true })
  const dataDir = join(dir, 'data')
  const peers = await startLongSessionPeers(options)
  const spans = traced ? await startTurnSpanCounts() : undefined
  const server = await startServerProcess({
    cwd: join(import.meta.dirname, '..', '..'),
    argv: ['infra/start.mjs'],
    dir,
    env: { ...userServerEnv(peers.mockUrl), ...spans?.env },
  })
  try {
    if (!traced) {
      for (const line of server.output().split('\n')) {
        if (/WARNING|sandbox/i.test(line)) options.notice?.(`server: ${line}`)
      }
    }
    const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      })
      const text = await response.text()
      if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${text}`)
      return JSON.parse(text) as unknown
    }
    const { session_id } = (await post('/v1/sessions', {
      instructions: 'Be brief.',
      harness: { max_context_tokens: options.contextTokens },
      tools: [lookupTool(peers.toolUrl)],
    })) as { session_id: string }
    await peers.stats()
    const disk = await diskWatch(dataDir, (path) => path.endsWith('/index/turns.json'))
    const random = seededRandom(33)
    const samples: TurnSample[] = []
    for (let turn = 1; turn <= options.turns; turn++) {
      const input = `task ${turn}: ${prose(random, 30)}`
      const headers: Record<string, string> = spans ? { traceparent: spans.nextTurn() } : {}
      const started = performance.now()
      const result = (await post(
        `/v1/sessions/${session_id}/turns`,
        { input },
        headers,
      )) as TurnResponse
      const ms = performance.now() - started
      if (result.status !== 'completed') throw new Error(`turn ${turn} ended ${result.status}`)
      const seen = await peers.stats()
      if (seen.receiver.calls !== 1) {
        throw new Error(`turn ${turn} called the tool ${seen.receiver.calls} times`)
      }
      const written = await disk.take()
      const sample: TurnSample = {
        turn,
        ms,
        objectRequests: Number.NaN,
        coordinatorTrips: Number.NaN,
        bytesWritten: written.bytes,
        turnIndexBytes: written.trackedBytes,
        requestBytes: Math.max(...seen.mock.requests),
        compacted: result.events.some((e) => e.type === 'thread.compact_boundary'),
        contentBytes: utf8(input) + seen.mock.content + seen.receiver.content,
      }
      samples.push(sample)
      if (!traced) await options.onTurn?.(sample, session_id, dataDir)
      if (turn % 100 === 0) process.stderr.write(`${name}: turn ${turn}\n`)
    }
    return { samples, calls: (await spans?.counts()) ?? [], dataDir }
  } finally {
    await server.stop()
    await spans?.close()
    await peers.close()
  }
}

/**
 * The timed run, then (with `counts`) the traced one; each turn's object requests and
 * coordinator calls taken from the traced run's same turn. Returns the timed run's data folder,
 * whose store the caller can read at the end.
 */
export async function runServerLongSession(
  options: ServerSessionOptions,
): Promise<{ samples: TurnSample[]; dataDir: string }> {
  const timed = await runOnce(options, 'timed', false)
  if (options.counts) {
    const counted = await runOnce(options, 'counted', true)
    // The same workload: the same turns should compact, else a turn's counts are another's.
    const differ = timed.samples.filter((s, i) => s.compacted !== counted.samples[i]?.compacted)
    options.notice?.(
      `counted run: ${counted.samples.filter((s) => s.compacted).length} compactions, ` +
        `${differ.length} turns compacting in one run and not in the other`,
    )
    for (const [i, sample] of timed.samples.entries()) {
      const calls = counted.calls[i]
      if (!calls) continue
      sample.objectRequests = calls.objectRequests
      sample.coordinatorTrips = calls.coordinatorTrips
    }
  }
  return { samples: timed.samples, dataDir: timed.dataDir }
}
