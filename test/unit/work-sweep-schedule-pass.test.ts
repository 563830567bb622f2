import { afterEach, describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { BackgroundWorker } from '../../functions/background/background-worker.ts'
import { sweepWork } from '../../functions/background/work-sweep.ts'
import type { WorkLocation } from '../../src/contract/work-record.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { engineDeps } from '../support/engine-deps.ts'
import { ScriptedModelClient } from '../support/scripted-model.ts'
import { testClock } from '../support/test-clock.ts'
import { until } from '../support/until.ts'

/**
 * The sweep's two halves on the real engine and a memory store: while the schedule pass is held
 * by one tenant whose loop reads do not answer (a slow store, a tenant with very many due loops),
 * another tenant's lost background work — recorded, its wake lost — is still found and run, at
 * this sweep and at the next, and the schedule pass, once it ends, still starts its run.
 */
const BUSY = 'a-busy'
const QUIET = 'z-quiet'

/** Reads of the busy tenant's loop objects wait until `release`. */
class HeldForBusy extends MemoryObjectStore {
  private opened!: () => void
  private readonly gate = new Promise<void>((resolve) => {
    this.opened = resolve
  })
  heldReads = 0
  release(): void {
    this.opened()
  }
  override async get(key: string) {
    if (key.includes(BUSY) && key.includes('loop')) {
      this.heldReads++
      await this.gate
    }
    return super.get(key)
  }
}

async function deployment() {
  const store = new HeldForBusy()
  const clock = testClock(Date.UTC(2026, 0, 1, 0, 0, 30))
  const model = new ScriptedModelClient()
  model.respond(() => ({ text: 'done' }))
  const fetchImpl = (async () => new Response('{}')) as unknown as typeof fetch
  const service = new SessionService(engineDeps({ store, model, fetch: fetchImpl, clock }, []))
  await service.createLoop(BUSY, {
    loop_id: 'nightly',
    task: 'Tidy one file.',
    schedule: { cron: '* * * * *' },
    budget: { max_steps: 1, max_tokens: 1_000_000, max_cost_usd: 1 },
  })
  await clock.advance(60_000)
  return { store, service, model }
}

/** A turn recorded for the worker whose wake was lost (as a route records it, no wake). */
async function lostWork(service: SessionService, input: string): Promise<WorkLocation> {
  const { session_id } = await service.createSession(QUIET, {})
  const queued = await service.queueTurn(QUIET, session_id, { input })
  return { tenant: QUIET, session_id, work_id: queued.work_id }
}

const doneState = (service: SessionService, at: WorkLocation) => async () => {
  const status = await service.workStatus(at.tenant, at.session_id, at.work_id)
  return status.state === 'done' ? status : undefined
}

let worker: BackgroundWorker | undefined
afterEach(() => worker?.stop())

describe('a sweep while the schedule pass is held', () => {
  it("runs another tenant's lost work at this sweep and the next, and the pass still fires once it ends", async () => {
    const { store, service } = await deployment()
    const first = await lostWork(service, 'found by the first sweep')
    worker = new BackgroundWorker(service, { concurrency: 2, sweepMs: 3_600_000, log: () => {} })
    const sweep = worker.sweep()
    await until('the schedule pass to reach the busy tenant', async () =>
      store.heldReads > 0 ? true : undefined,
    )
    await until('the first lost work to run', doneState(service, first))
    expect(await sweep).toBe(1)
    // Lost after that listing: the next sweep finds it, though the pass is still held.
    const second = await lostWork(service, 'found by the second sweep')
    void worker.sweep()
    await until('the second lost work to run', doneState(service, second))
    // The pass is still held: no run of the busy tenant was started yet.
    expect((await store.list('.turnline/loop-runs/')).objects).toEqual([])

    store.release()
    const run = await until('the scheduled run to be started and run', async () => {
      const loop = await service.getLoop(BUSY, 'nightly')
      return loop.run?.state === 'stopped' ? loop.run : undefined
    })
    expect(run).toMatchObject({ trigger: 'schedule' })
    expect(await service.getLoop(BUSY, 'nightly')).toMatchObject({ step_index: 1 })
  })

  it('wakes each record once per sweep, whether the pass or the listing met it first', async () => {
    const { store, service } = await deployment()
    const lost = await lostWork(service, 'lost')
    store.release()
    const pages: WorkLocation[][] = []
    const wake = (page: WorkLocation[]) => void pages.push(page)
    const found = await sweepWork(service, { wake, log: () => {} })
    const woken = pages.flat().map((at) => at.tenant)
    expect(woken.sort()).toEqual([BUSY, QUIET])
    expect(found).toBe(2)
    expect(pages.flat()).toContainEqual(lost)
  })
})
