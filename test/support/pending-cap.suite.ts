import { describe, expect, it } from 'vitest'
import type { TurnlineError } from '../../src/contract/errors.ts'
import { SessionService } from '../../src/core/session-service.ts'
import type { Coordinator } from '../../src/ports/coordinator.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { engineDeps } from './engine-deps.ts'
import { gate } from './gate.ts'
import { ScriptedModelClient } from './scripted-model.ts'
import { until } from './until.ts'

/** A deployment's backends for one test: one store, a coordinator client per instance. */
export interface CapBackends {
  store: ObjectStore
  /** Two clients of one coordinator: the instances' own. */
  coordinators: readonly [Coordinator, Coordinator]
  close(): Promise<void>
}

/**
 * The pending-work cap (TURNLINE_MAX_PENDING_WORK) as requests meet it, on the real service over
 * the backends given (two instances sharing them): a keyed retry of a background exec or of a
 * loop run start is its duplicate at the cap — its record pending, or run and gone — never
 * refused and never run again; of loops created with `autorun` at once for the last place
 * exactly one is created and nothing of the others; and a record written whose hold is not
 * dropped yet is counted once, so the next request is taken then (and the one after refused).
 */
export function describePendingCapAdmissions(label: string, open: () => Promise<CapBackends>) {
  describe(`the pending-work cap as requests meet it (${label})`, () => {
    it('answers a keyed exec retried at the cap as its duplicate, pending or after it ran, never running it again', async () => {
      const { a, model, close } = await deployment(open, 2)
      try {
        const first = await a.queueExec('acme', { prompt: 'build' }, { idempotencyKey: 'exec-k1' })
        expect(first.duplicate).toBe(false)
        await a.queueExec('acme', { prompt: 'fill' })
        const again = () => a.queueExec('acme', { prompt: 'build' }, { idempotencyKey: 'exec-k1' })
        expect(await again()).toEqual({ ...first, duplicate: true })
        expect(await refusal(a.queueExec('acme', { prompt: 'new' }))).toBe('rate_limited')

        // It runs, its record leaves the queue, and the tenant is at the cap again.
        model.enqueue({ text: 'built' })
        const at = { tenant: 'acme', session_id: first.session_id, work_id: first.work_id }
        expect(await a.runWork(at)).toMatchObject({ outcome: 'done' })
        await a.queueExec('acme', { prompt: 'fill again' })
        expect(await again()).toEqual({ ...first, duplicate: true })
        expect((await a.listWork()).items).toHaveLength(2)
        const reused = a.queueExec('acme', { prompt: 'other' }, { idempotencyKey: 'exec-k1' })
        expect(await refusal(reused)).toBe('idempotency_key_reused')
        expect(await a.workStatus('acme', first.session_id, first.work_id)).toMatchObject({
          state: 'done',
        })
        expect(model.requests).toHaveLength(1)
      } finally {
        await close()
      }
    })

    it('answers a keyed loop run start retried at the cap as its duplicate, running or stopped', async () => {
      const { a, b, model, close } = await deployment(open, 2)
      try {
        await a.createLoop('acme', oneStep('tidy'))
        const options = { trigger: 'api' as const, idempotencyKey: 'run-k1' }
        const first = await a.runLoop('acme', 'tidy', options)
        expect(first.duplicate).toBe(false)
        await a.queueExec('acme', { prompt: 'fill' })
        const again = await b.runLoop('acme', 'tidy', options)
        expect(again).toMatchObject({ duplicate: true, work: { work_id: first.work.work_id } })
        expect(again.loop.run?.run_id).toBe(first.loop.run?.run_id)
        await a.createLoop('acme', oneStep('other'))
        expect(await refusal(b.runLoop('acme', 'other', { trigger: 'api' }))).toBe('rate_limited')
        expect((await a.listWork()).items).toHaveLength(2)

        // Its step runs and the run stops (the budget's one step); at the cap again, the retry
        // is still its duplicate and records nothing.
        model.enqueue({ text: 'tidied' })
        const step = { tenant: 'acme', ...first.work }
        expect(await a.runWork(step)).toMatchObject({ outcome: 'done' })
        await a.queueExec('acme', { prompt: 'fill again' })
        const late = await b.runLoop('acme', 'tidy', options)
        expect(late).toMatchObject({ duplicate: true, loop: { run: { state: 'stopped' } } })
        expect(late.loop.run?.run_id).toBe(first.loop.run?.run_id)
        expect((await a.listWork()).items).toHaveLength(2)
        expect(model.requests).toHaveLength(1)
      } finally {
        await close()
      }
    })

    it('creates exactly one of the autorun loops sent at once for the last place, and nothing of the others', async () => {
      const { a, b, close } = await deployment(open, 4)
      try {
        for (let n = 0; n < 3; n++) await a.queueExec('acme', { prompt: `fill ${n}` })
        const raced = await Promise.allSettled(
          Array.from({ length: 8 }, (_, n) =>
            (n % 2 ? b : a).createRunningLoop('acme', { ...oneStep(`race-${n}`), autorun: true }),
          ),
        )
        const created = raced.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
        expect(created).toHaveLength(1)
        for (const refused of raced.filter((r) => r.status === 'rejected')) {
          expect((refused.reason as TurnlineError).code).toBe('rate_limited')
        }
        const winner = created[0]?.loop.loop_id
        for (let n = 0; n < 8; n++) {
          const loop = a.getLoop('acme', `race-${n}`)
          if (`race-${n}` === winner) await expect(loop).resolves.toMatchObject({ run: {} })
          else expect(await refusal(loop)).toBe('not_found')
        }
        expect((await a.listWork()).items).toHaveLength(4)
      } finally {
        await close()
      }
    })

    const unnamedBefore: [string, (a: SessionService) => Promise<unknown>][] = [
      ['an exec without a key', (a) => a.queueExec('acme', { prompt: 'held' })],
      [
        'a loop run start',
        async (a) => {
          await a.createLoop('acme', oneStep('held'))
          return a.runLoop('acme', 'held', { trigger: 'api' })
        },
      ],
      [
        'an autorun loop',
        (a) => a.createRunningLoop('acme', { ...oneStep('held'), autorun: true }),
      ],
    ]
    it.each(unnamedBefore)(
      'counts %s once between its record and its hold’s release',
      async (_, admit) => {
        const { a, b, held, close } = await deployment(open, 3)
        try {
          await a.queueExec('acme', { prompt: 'fill' })
          const release = held.next()
          const holding = admit(a)
          await until('its record written, its hold standing', () => held.holding() || undefined)
          // Two places taken (the fill, the held one's record and its hold): the third is free.
          await b.queueExec('acme', { prompt: 'third' })
          expect(await refusal(b.queueExec('acme', { prompt: 'fourth' }))).toBe('rate_limited')
          release()
          await holding
          expect((await a.listWork()).items).toHaveLength(3)
        } finally {
          await close()
        }
      },
    )
  })
}

const oneStep = (loopId: string) => ({
  loop_id: loopId,
  task: 'Tidy one file.',
  budget: { max_steps: 1, max_tokens: 1_000_000, max_cost_usd: 1 },
})

/** The code a call was refused with (the test fails when it was not). */
export async function refusal(call: Promise<unknown>): Promise<string | undefined> {
  try {
    await call
  } catch (error) {
    return (error as TurnlineError).code
  }
  throw new Error('expected a refusal')
}

/** Two instances of one deployment capped at `max` pending records a tenant, no worker. */
export async function deployment(open: () => Promise<CapBackends>, max: number) {
  const backends = await open()
  const held = heldRecords(backends.store)
  const model = new ScriptedModelClient()
  const fetchImpl = (async () => new Response('{}')) as unknown as typeof fetch
  const instance = (coordinator: Coordinator) =>
    new SessionService(
      engineDeps(
        {
          store: held.store,
          coordinator,
          model,
          fetch: fetchImpl,
          defaults: { tenantCaps: { pendingWork: max, scheduledLoops: 100 } },
        },
        [],
      ),
    )
  const [first, second] = backends.coordinators
  return { a: instance(first), b: instance(second), model, held, close: backends.close }
}

/**
 * The store, where the next pending record's write can be held once it is done (the record
 * listed, its writer not yet back): the moment its hold still stands.
 */
function heldRecords(store: ObjectStore) {
  let armed: Promise<void> | undefined
  let holding = false
  let before: ((key: string) => Promise<void>) | undefined
  const put: ObjectStore['put'] = async (key, body, options) => {
    // A new pending record (create-only), before it is written: the test may hold it or fail it.
    const creating = key.includes('.turnline/work/pending/') && options?.ifNoneMatch === '*'
    if (creating && before) await before(key)
    const written = await store.put(key, body, options)
    const wait = armed
    if (wait && key.includes('.turnline/work/pending/')) {
      armed = undefined
      holding = true
      await wait
      holding = false
    }
    return written
  }
  const wrapped = new Proxy(store, {
    get(target, property) {
      if (property === 'put') return put
      const value = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  return {
    store: wrapped,
    holding: () => holding,
    /** Called before every new pending record is written (undefined: none). */
    beforeCreate(hook: ((key: string) => Promise<void>) | undefined): void {
      before = hook
    },
    /** Holds the next record's write; answers what lets it go on. */
    next(): () => void {
      const held = gate()
      armed = held.promise
      return held.open
    },
  }
}
