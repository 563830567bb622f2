import { createHmac } from 'node:crypto'
import { realpathSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exercisedCases } from '../support/conformance-coverage.ts'
import { conformanceAnswer } from '../support/conformance-model.ts'
import { NORMALISED, normalise } from '../support/conformance-normalise.ts'
import {
  type ConformanceCall,
  type ConformanceRecord,
  runConformanceScenario,
} from '../support/conformance-scenario.ts'
import { type LambdaBundle, loadLambdaBundle } from '../support/lambda-bundle.ts'
import { LAMBDA_URL_HOST } from '../support/lambda-runtime.ts'
import type { MockRequest } from '../support/mock-openai.ts'
import { startNodeEntry } from '../support/node-entry.ts'
import { executableOf, type NodeBinary, otherNodeMajor } from '../support/other-node.ts'
import { DENO_FLAGS, denoTaskFlags, startDeno, startWorkerd } from '../support/runtimes.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'
import { startToolReceiver } from '../support/tool-receiver.ts'

/**
 * One handler, every runtime, the same events — byte for byte. The scripted sessions of
 * conformance-scenario.ts run against real Node (`npm start`'s entry: filesystem store; S3 +
 * Upstash; and on the other Node major `engines` allows, 20 or 22: other-node.ts), real Deno (filesystem store; S3 on moto + Upstash through the test proxy), real
 * workerd (`wrangler dev`, S3 + Upstash) and the Lambda bundle (the Runtime API stand-in, S3 +
 * Upstash), then with turns alternating between Deno and workerd on one store. One mock model (answers
 * computed from each request: conformance-model.ts), one moto bucket and one redis-server for all
 * of them (each deployment its own S3_PREFIX and Redis namespace), the same runner configuration
 * (a runner URL that is never called: every runtime offers the same sandbox tools) and the same
 * tool receiver. After normalising only what NORMALISED lists (ids and timestamps), every
 * answer and every model request must be identical to Node's, and Node's transcript must show
 * every case the script is for (conformance-coverage.ts).
 */
const TOOL_SECRET = 'conformance-tool-secret'
/**
 * One runtime's start and 19 calls. Generous: on the shared 2-core machine under load the Lambda
 * bundle's build and load alone took 50 s, workerd's start 20 s.
 */
const RUN_TIMEOUT_MS = 240_000
const common = (receiverHost: string, modelBaseURL: string) => ({
  TURNLINE_SINGLE_TENANT: '1',
  OPENAI_BASE_URL: modelBaseURL,
  OPENAI_API_KEY: 'test-key',
  TURNLINE_MODEL: 'gpt-4o-mini',
  TURNLINE_TOOL_ALLOWED_HOSTS: receiverHost,
  TURNLINE_TOOL_SECRET: TOOL_SECRET,
  TURNLINE_RUNNER_URL: 'http://127.0.0.1:9',
  TURNLINE_RUNNER_SECRET: 'conformance-runner-secret-0123456789',
})

interface Run {
  records: unknown
  requests: unknown
  startMs: number
  turnMs: number[]
}

let backends: TestBackends | undefined
let receiver: Awaited<ReturnType<typeof startToolReceiver>> | undefined
let dataDir = ''
const runs = new Map<string, Run>()
/** Node 20 when the tests run on Node 22 (CI), Node 22 when they run on Node 20. */
let otherNode: NodeBinary | undefined
/** The run every other is compared with: `npm start`'s entry on the Node running the tests. */
const REFERENCE = `node ${process.version}`
const stops: (() => Promise<void>)[] = []

const httpCall =
  (runtime: { url: string }): ConformanceCall =>
  async (request) => {
    const response = await fetch(`${runtime.url}${request.path}`, {
      method: request.method,
      headers: request.headers ?? {},
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
      signal: AbortSignal.timeout(30_000),
    })
    const contentType = response.headers.get('content-type') ?? ''
    return { status: response.status, contentType, text: await response.text() }
  }

/** Runs the scenario, its calls picked per step, and keeps its transcript and model requests. */
async function record(name: string, startMs: number, callAt: (step: number) => ConformanceCall) {
  if (!backends || !receiver) throw new Error('setup failed')
  const mock = backends.mock
  const first = mock.requests.length
  const turnMs: number[] = []
  const timed = (step: number): ConformanceCall => {
    const call = callAt(step)
    return async (request) => {
      const started = performance.now()
      const answer = await call(request)
      if (request.path.endsWith('/turns')) turnMs.push(performance.now() - started)
      return answer
    }
  }
  const records: ConformanceRecord[] = await runConformanceScenario(timed, receiver.url)
  const requests = mock.requests.slice(first).map((r: MockRequest) => ({
    path: r.path,
    stream: r.stream,
    body: r.body,
  }))
  runs.set(name, { records: normalise(records), requests: normalise(requests), startMs, turnMs })
}

/** Starts a runtime, timing spawn → first healthy answer, and stops it after the whole file. */
async function started<T extends { stop(): Promise<void> }>(start: () => Promise<T>) {
  const began = performance.now()
  const runtime = await start()
  stops.push(() => runtime.stop())
  return { runtime, startMs: performance.now() - began }
}

/** `npm start`'s entry as a process, once it listens. */
async function nodeEntry(env: Record<string, string>) {
  const node = startNodeEntry(env)
  const url = await node.listening().catch(async (error: unknown) => {
    await node.stop()
    throw error
  })
  return { url, pid: node.child.pid, stop: () => node.stop() }
}

function s3Env(name: string): Record<string, string> {
  if (!backends || !receiver) throw new Error('setup failed')
  return {
    ...backends.env({
      S3_PREFIX: name,
      TURNLINE_REDIS_NAMESPACE: `${backends.bucket.bucket}-${name}`,
    }),
    ...common(receiver.host, backends.mock.baseURL),
  }
}

beforeAll(async () => {
  backends = await startTestBackends('conformance')
  backends.mock.respond(conformanceAnswer)
  receiver = await startToolReceiver(
    createHmac('sha256', TOOL_SECRET).update('local').digest('hex'),
  )
  dataDir = await mkdtemp(join(tmpdir(), 'turnline-conformance-'))
  otherNode = otherNodeMajor()
}, 360_000)

afterAll(async () => {
  for (const stop of stops.splice(0)) await stop()
  await receiver?.close()
  await backends?.close()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

describe('the same sessions on every runtime', { timeout: RUN_TIMEOUT_MS }, () => {
  it(`Node (npm start entry, filesystem store) on this process's Node`, async () => {
    if (!backends || !receiver) throw new Error('setup failed')
    const env = {
      ...common(receiver.host, backends.mock.baseURL),
      PORT: '0',
      TURNLINE_DATA_DIR: join(dataDir, 'node'),
    }
    const { runtime, startMs } = await started(() => nodeEntry(env))
    await record(REFERENCE, startMs, () => httpCall(runtime))
  })

  it('Node of the other major engines allows (20 or 22), filesystem store', async () => {
    if (!backends || !receiver || !otherNode) throw new Error('setup failed')
    const env = {
      ...common(receiver.host, backends.mock.baseURL),
      PATH: `${dirname(otherNode.bin)}${delimiter}${process.env.PATH ?? ''}`,
      PORT: '0',
      TURNLINE_DATA_DIR: join(dataDir, 'node-other'),
    }
    const { runtime, startMs } = await started(() => nodeEntry(env))
    expect(executableOf(runtime.pid ?? 0), 'the entry runs on that Node').toBe(
      realpathSync(otherNode.bin),
    )
    await record(`node ${otherNode.version}`, startMs, () => httpCall(runtime))
  })

  it('Node (npm start entry), S3 + Upstash', async () => {
    const env = { ...s3Env('node'), PORT: '0' }
    const { runtime, startMs } = await started(() => nodeEntry(env))
    await record('node s3', startMs, () => httpCall(runtime))
  })

  it('Deno, filesystem store', async () => {
    if (!backends || !receiver) throw new Error('setup failed')
    const data = join(dataDir, 'deno')
    const env = { ...common(receiver.host, backends.mock.baseURL), TURNLINE_DATA_DIR: data }
    const { runtime, startMs } = await started(() => startDeno(env, denoTaskFlags('serve')))
    await record('deno fs', startMs, () => httpCall(runtime))
  })

  it('Deno, S3 + Upstash', async () => {
    const { runtime, startMs } = await started(() => startDeno(s3Env('deno'), DENO_FLAGS))
    await record('deno s3', startMs, () => httpCall(runtime))
  })

  it('workerd (wrangler dev), S3 + Upstash', async () => {
    const { runtime, startMs } = await started(() => startWorkerd(s3Env('workerd')))
    await record('workerd s3', startMs, () => httpCall(runtime))
  })

  it('the Lambda bundle, S3 + Upstash', async () => {
    const { runtime, startMs } = await started<LambdaBundle & { stop(): Promise<void> }>(
      async () => {
        // A function URL's host: without API keys the server answers only names it is given.
        const host = { TURNLINE_ALLOWED_HOSTS: LAMBDA_URL_HOST }
        const bundle = await loadLambdaBundle({ ...s3Env('lambda'), ...host })
        return { ...bundle, stop: () => bundle.close() }
      },
    )
    await record('lambda s3', startMs, () => runtime.call)
  })

  it('turns alternating between Deno and workerd on one store', async () => {
    const env = s3Env('alternating')
    const [deno, workerd] = await Promise.all([
      started(() => startDeno(env, DENO_FLAGS)),
      started(() => startWorkerd(env)),
    ])
    const calls = [httpCall(deno.runtime), httpCall(workerd.runtime)]
    await record('deno + workerd, alternating', 0, (step) => calls[step % 2] as ConformanceCall)
  })

  it('the script exercised every case it is there for (the reference run shows each)', () => {
    const reference = runs.get(REFERENCE)
    expect(reference, 'the reference run').toBeDefined()
    const cases = exercisedCases((reference?.records ?? []) as ConformanceRecord[])
    const everyCase = Object.fromEntries(Object.keys(cases).map((name) => [name, true]))
    expect(cases).toEqual(everyCase)
  })

  it('answered and asked the model byte for byte alike, ids and timestamps aside', () => {
    const node = runs.get(REFERENCE)
    expect(node, 'the Node run').toBeDefined()
    const text = (value: unknown) => JSON.stringify(value, null, 1)
    const normalised = `normalised: ${NORMALISED.join('; ')}`
    for (const [name, run] of runs) {
      if (name === REFERENCE) continue
      expect(text(run.records), `${name}: answers (${normalised})`).toBe(text(node?.records))
      expect(text(run.requests), `${name}: model requests (${normalised})`).toBe(
        text(node?.requests),
      )
    }
    expect([...runs.keys()]).toHaveLength(8)
    const median = (list: number[]) => [...list].sort((a, b) => a - b)[list.length >> 1] ?? 0
    for (const [name, run] of runs) {
      console.log(
        `conformance ${name.padEnd(28)} ` +
          (run.startMs > 0 ? `ready in ${run.startMs.toFixed(0).padStart(5)} ms, ` : '') +
          `median turn ${median(run.turnMs).toFixed(0)} ms over ${run.turnMs.length} turns`,
      )
    }
  })
})
