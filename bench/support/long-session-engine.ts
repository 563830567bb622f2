/**
 * bench/long-session.ts's `--mode engine`: the same workload through the engine
 * (`SessionService`) in the bench's own process (test/support/long-session.ts), on the fs store
 * (a temporary folder; `s3`: moto from `npm run services:start`; `memory`). What only this mode
 * shows: object requests and coordinator round trips counted on the engine's ports, fsyncs
 * (fs), and what the turns cost without HTTP, the operator log or the runner.
 */
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { runLongSession, type TurnSample } from '../../test/support/long-session.ts'
import { benchS3Store } from './bench-s3.ts'
import { coldRehydration, type Rehydration } from './cold-rehydration.ts'
import { fsyncCount, installFsyncCounter } from './fsync-counter.ts'

export async function runEngineLongSession(options: {
  dir: string
  store: 'fs' | 's3' | 'memory'
  turns: number
  contextTokens: number
  toolBytes: number
  bigEvery: number
  bigBytes: number
  rehydrateAt: number[]
}) {
  await installFsyncCounter(options.dir)
  const s3 = options.store === 's3' ? await benchS3Store() : undefined
  const store: ObjectStore =
    s3?.store ??
    (options.store === 'memory'
      ? new MemoryObjectStore()
      : new FsObjectStore({ root: options.dir }))
  /** A store adapter that shares nothing with the one the turns ran on (fs: a new instance). */
  const fresh = (): ObjectStore =>
    options.store === 'fs' ? new FsObjectStore({ root: options.dir }) : store
  const fsyncs: number[] = []
  const rehydrations: Rehydration[] = []
  let syncs = fsyncCount()
  const samples: TurnSample[] = await runLongSession({
    turns: options.turns,
    store,
    contextTokens: options.contextTokens,
    toolBytes: options.toolBytes,
    ...(options.bigEvery > 0 ? { bigEvery: options.bigEvery, bigBytes: options.bigBytes } : {}),
    onTurn: async (s, sessionId) => {
      fsyncs.push(fsyncCount() - syncs)
      if (options.rehydrateAt.includes(s.turn)) {
        rehydrations.push(await coldRehydration(fresh, sessionId, s.turn))
      }
      syncs = fsyncCount()
      if (s.turn % 100 === 0) process.stderr.write(`turn ${s.turn}\n`)
    },
  })
  return { samples, store, fsyncs, rehydrations, destroy: async () => s3?.destroy() }
}
