/**
 * bench/long-session.ts's default mode: the long-session workload (test/support/long-session.ts)
 * driven over HTTP against `npm start` in its own process (server-process.ts, started as
 * bench/turn-cost-user.ts starts it: default configuration, only the data folder, a free port,
 * the model's base URL and the tool secret given), with the mock of the OpenAI API and the tool
 * receiver each in a process of their own (long-session-peers.ts). Everything a turn's figures
 * hold is taken outside the server process: the turn's time by the client, the model request
 * sizes by the mock, the rest by the store (long-session-backends.ts): on fs the bytes written
 * from the data folder on disk, object requests and coordinator calls by a second run of the
 * same workload on a second server that exports its traces (turn-span-counts.ts), so the timed
 * run stays at the default configuration; on s3 all three on the wire, in the timed run.
 */
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { TurnResponse } from '../../src/contract/api.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { prose, seededRandom } from '../../test/support/compaction-histories.ts'
import type { TurnSample } from '../../test/support/long-session.ts'
import { fsBackend, type LongSessionBackend, s3Backend } from './long-session-backends.ts'
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
  /** `fs` (the default configuration) or `s3` (moto + Upstash, counted on the wire). */
  store: 'fs' | 's3'
  /** On fs, also count object requests and coordinator calls (a second, traced run). */
  counts: boolean
  /** After each turn of the timed run, with a function giving new adapters on its store. */
  onTurn?: (sample: TurnSample, sessionId: string, store: () => ObjectStore) => void | Promise<void>
  /** Lines the timed run's server printed about its sandbox or a warning; the runs' agreement. */
  notice?: (line: string) => void
}

interface Run {
  samples: TurnSample[]
  calls: TurnCalls[]
  backend: LongSessionBackend
}

const utf8 = (text: string) => new TextEncoder().encode(text).byteLength

async function runOnce(options: ServerSessionOptions, name: string, traced: boolean): Promise<Run> {
  const dir = join(options.dir, name)
  await mkdir(dir, { recursive: true })
  const backend = options.store === 's3' ? await s3Backend() : fsBackend(dir)
  const peers = await startLongSessionPeers(options)
  const spans = traced ? await startTurnSpanCounts() : undefined
  const server = await startServerProcess({
    cwd: join(import.meta.dirname, '..', '..'),
    argv: ['infra/start.mjs'],
    dir,
    env: { ...userServerEnv(peers.mockUrl), ...backend.env, ...spans?.env },
  })
  let kept = false
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
    await backend.start()
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
      const sample: TurnSample = {
        turn,
        ms,
        ...(await backend.afterTurn()),
        requestBytes: Math.max(...seen.mock.requests),
        compacted: result.events.some((e) => e.type === 'thread.compact_boundary'),
        contentBytes: utf8(input) + seen.mock.content + seen.receiver.content,
      }
      samples.push(sample)
      if (!traced) await options.onTurn?.(sample, session_id, backend.store)
      if (turn % 100 === 0) process.stderr.write(`${name}: turn ${turn}\n`)
    }
    const calls = (await spans?.counts()) ?? []
    kept = true
    return { samples, calls, backend }
  } finally {
    await server.stop()
    await spans?.close()
    await peers.close()
    if (!kept) await backend.close()
  }
}

/**
 * The timed run, then (on fs, with `counts`) the traced one; each turn's object requests and
 * coordinator calls taken from the traced run's same turn (on s3: counted on the wire in the
 * timed run). Returns the timed run's store, to read at the end, and what releases it.
 */
export async function runServerLongSession(options: ServerSessionOptions): Promise<{
  samples: TurnSample[]
  store: () => ObjectStore
  close: () => Promise<void>
}> {
  const timed = await runOnce(options, 'timed', false)
  if (options.counts && options.store === 'fs') {
    const counted = await runOnce(options, 'counted', true)
    await counted.backend.close()
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
  return { samples: timed.samples, store: timed.backend.store, close: timed.backend.close }
}
