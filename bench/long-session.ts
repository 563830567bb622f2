/**
 * `npm run bench:long-session [-- --turns N] [--window TOKENS] [--big EVERY] [--svg FILE]
 *  [--mode server|engine] [--counts 1|0] [--store fs|s3|memory] [--samples FILE]`: one session driven to 1,000
 * turns, a 4 KB tool answer each turn, a 2 MB one every 100 turns (kept as an output artifact), a
 * 16,000-token context window so compaction crosses again and again.
 *
 * `--mode server` (the default): through `npm start` in its own process, as users run it (default
 * configuration: operator log on, the embedded runner, the sandbox as detected; data in the
 * bench's temporary folder), over HTTP, the mock of the OpenAI API and the tool receiver each
 * their own process (bench/support/long-session-server.ts). Every figure is taken outside the
 * server: turn time by the client, model request size by the mock, bytes written from the data
 * folder on disk, object requests and coordinator calls from the server's exported traces of a
 * second run of the same workload (`--counts 0` skips it), rehydration by a cold engine in this
 * process reading the server's data folder between turns.
 *
 * `--store s3` (server mode): `npm start` on a bucket on moto and Upstash over redis-server
 * (`npm run services:start`), each counting its own requests (the Upstash REST proxy's notes,
 * moto's request log): object requests, coordinator round trips and the bytes sent to S3, in the
 * timed run.
 *
 * `--mode engine`: the engine in this process (bench/support/long-session-engine.ts) on `--store`,
 * its ports counted directly, fsyncs too (fs).
 *
 * Prints, by stage (turns 2–11, 91–100, 291–300, 991–1,000): median and p99 turn time as a ratio
 * to turns 2–11, model request size, object requests and coordinator round trips per turn, bytes
 * written per turn; then what the store holds at the end, by kind of object, against the content
 * (messages and tool outputs); the time a cold engine takes to rehydrate the session after turns
 * 10, 100, 300 and 1,000 (the objects and bytes it reads), as a ratio to the first; and writes
 * the curve (median turn time ratio and bytes per turn, by blocks of 10 turns) as an SVG.
 * Method and figures: docs/performance.md#long-sessions.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { parseArgs } from 'node:util'
import { coldRehydration, type Rehydration } from './support/cold-rehydration.ts'
import { runEngineLongSession } from './support/long-session-engine.ts'
import {
  curve,
  type ReportShape,
  reportRehydration,
  reportStages,
  reportStored,
} from './support/long-session-report.ts'
import { runServerLongSession } from './support/long-session-server.ts'
import { TENANT } from './support/turn-cost-scenario.ts'

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'server' },
    counts: { type: 'string', default: '1' },
    turns: { type: 'string', default: '1000' },
    window: { type: 'string', default: '16000' },
    store: { type: 'string', default: 'fs' },
    big: { type: 'string', default: '100' },
    svg: { type: 'string' },
    /** Every turn's figures as JSON, to draw or check again without a run. */
    samples: { type: 'string' },
  },
})
const turns = Number(values.turns)
const workload = {
  turns,
  contextTokens: Number(values.window),
  toolBytes: 4096,
  bigEvery: Number(values.big),
  bigBytes: 2 * 1024 * 1024,
}
const rehydrateAt = [10, 100, 300, 1000].filter((t) => t < turns).concat(turns)
const dir = await mkdtemp(`${tmpdir()}/turnline-long-session-`)
try {
  if (values.mode === 'server') await serverMode()
  else if (values.mode === 'engine') await engineMode()
  else throw new Error(`--mode server|engine, not ${values.mode}`)
} finally {
  await rm(dir, { recursive: true, force: true })
}

async function serverMode() {
  const store = values.store === 's3' ? 's3' : 'fs'
  if (values.store !== store) throw new Error('--mode server runs on fs (its default) or s3')
  // The sandbox user must get through to the workspaces under the data folder.
  await chmod(dir, 0o711)
  const rehydrations: Rehydration[] = []
  const shape: ReportShape = { bigEvery: workload.bigEvery, store: `npm start, ${store}` }
  console.log(
    `npm start (infra/start.mjs) in its own process, ${store === 'fs' ? 'default configuration' : 'S3 (moto) + Upstash, counted on the wire'}, over HTTP; Node ${process.version}`,
  )
  const run = await runServerLongSession({
    ...workload,
    dir,
    store,
    counts: values.counts !== '0',
    notice: (line) => console.log(line),
    onTurn: async (s, sessionId, fresh) => {
      if (!rehydrateAt.includes(s.turn)) return
      rehydrations.push(await coldRehydration(fresh, sessionId, s.turn, 15, TENANT))
    },
  })
  try {
    if (values.samples) await writeFile(values.samples, JSON.stringify(run.samples))
    reportStages(run.samples, shape)
    reportRehydration(rehydrations, `the server's ${store} store, read by this process`)
    await reportStored(run.store(), run.samples, shape)
    if (values.svg) {
      const title = `A 1,000-turn session on npm start (${store}): median turn time and bytes written per turn`
      await writeFile(values.svg, curve(run.samples, shape, title))
    }
  } finally {
    await run.close()
  }
}

async function engineMode() {
  const store = values.store === 's3' ? 's3' : values.store === 'memory' ? 'memory' : 'fs'
  const run = await runEngineLongSession({ ...workload, dir, store, rehydrateAt })
  const shape: ReportShape = { bigEvery: workload.bigEvery, store: `engine in process, ${store}` }
  try {
    if (values.samples) await writeFile(values.samples, JSON.stringify(run.samples))
    reportStages(run.samples, shape)
    reportRehydration(run.rehydrations, store)
    await reportStored(run.store, run.samples, shape, store === 'fs' ? run.fsyncs : undefined)
    if (values.svg) {
      const title =
        'A 1,000-turn session in the engine: median turn time and bytes written per turn'
      await writeFile(values.svg, curve(run.samples, shape, title))
    }
  } finally {
    await run.destroy()
  }
}
