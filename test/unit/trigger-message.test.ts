import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { deliverTrigger, retryDelayMs } from '../../functions/background/trigger-delivery.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import {
  callbacksMessage,
  parseTriggerMessage,
  workMessage,
} from '../../src/contract/trigger-message.ts'
import type { WorkLocation } from '../../src/contract/work-record.ts'
import type { WorkRunOutcome } from '../../src/core/session-api.ts'

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/queue/${name}`, import.meta.url), 'utf8')

/**
 * The body of a platform queue message (Cloudflare Queues, SQS): read as JSON text or as the
 * value a JSON message carries, its version checked, since a message sent by one release may be
 * delivered to the next.
 */
describe('trigger message', () => {
  it('reads the v1 fixtures, as text and as values, and writes the same', () => {
    const work = parseTriggerMessage(fixture('work-v1.json'))
    expect(work).toEqual(
      workMessage({
        tenant: 'acme',
        session_id: 'session-20261205T094039Z-135d989a043dcba6',
        work_id: '8aa43608586de315e60ee8cb32fa65bd',
      }),
    )
    expect(JSON.stringify(work)).toBe(fixture('work-v1.json'))
    expect(parseTriggerMessage(JSON.parse(fixture('work-v1.json')))).toEqual(work)
    expect(parseTriggerMessage(fixture('callbacks-v1.json'))).toEqual(callbacksMessage())
    expect(JSON.stringify(callbacksMessage())).toBe(fixture('callbacks-v1.json'))
  })

  it('refuses another version, another format and a bad work id by name', () => {
    const v1 = JSON.parse(fixture('work-v1.json')) as Record<string, unknown>
    const refused = (input: unknown, code: 'unsupported_version' | 'corrupt_data') => {
      try {
        parseTriggerMessage(input)
      } catch (error) {
        expect(isTurnlineError(error, code), String(error)).toBe(true)
        return
      }
      throw new Error(`accepted ${JSON.stringify(input)}`)
    }
    refused({ ...v1, version: 2 }, 'unsupported_version')
    refused({ ...v1, format: 'turnline.work' }, 'corrupt_data')
    refused({ ...v1, work_id: '../x' }, 'corrupt_data')
    refused({ ...v1, kind: 'other' }, 'corrupt_data')
    refused('not json', 'corrupt_data')
    refused(null, 'corrupt_data')
  })

  it('backs off 2 s, 4 s, … up to the platform maximum', () => {
    expect([1, 2, 3].map((n) => retryDelayMs(n, 60_000))).toEqual([2000, 4000, 8000])
    expect(retryDelayMs(40, 60_000)).toBe(60_000)
  })
})

describe('deliverTrigger: how a queue message is settled', () => {
  const at = { tenant: 'acme', session_id: 's1', work_id: '8aa43608586de315e60ee8cb32fa65bd' }
  const settle = async (outcome: WorkRunOutcome | Error, message = workMessage(at)) => {
    const woken: WorkLocation[] = []
    let passes = 0
    const settled = await deliverTrigger(message, 3, {
      api: {
        runWork: async () => {
          if (outcome instanceof Error) throw outcome
          return outcome
        },
      },
      wake: (next) => {
        woken.push(next)
      },
      callbacks: async () => {
        passes += 1
      },
      maxDelayMs: 60_000,
      log: () => {},
    })
    return { settled, woken, passes }
  }
  const next = { ...at, work_id: 'ffa43608586de315e60ee8cb32fa65bd' }
  const error = { code: 'model_error', message: 'down', at: '2026-12-05T10:00:00Z' }

  it('acknowledges an outcome and rings the bell for a loop run’s next step', async () => {
    const done = await settle({ outcome: 'done', status: 'completed', next })
    expect(done.settled).toEqual({ settle: 'ack', outcome: 'done' })
    expect(done.woken).toEqual([next])
    for (const outcome of [{ outcome: 'gone' }, { outcome: 'failed', error }] as const) {
      expect((await settle(outcome)).settled).toMatchObject({ settle: 'ack' })
    }
  })

  it('puts a busy one back for as long as the lease says, up to the sweep’s period', async () => {
    expect((await settle({ outcome: 'busy', retryAfterMs: 4000 })).settled).toEqual({
      settle: 'retry',
      delayMs: 4000,
      outcome: 'busy',
    })
    // Longer (the tenant's quota): acknowledged, the next sweep finds it again.
    expect((await settle({ outcome: 'busy', retryAfterMs: 300_000 })).settled).toEqual({
      settle: 'ack',
      outcome: 'busy',
    })
  })

  it('backs off after a fault, counted by the run or thrown by the store', async () => {
    const retried = { settle: 'retry', delayMs: 8000 }
    expect((await settle({ outcome: 'retry', error })).settled).toEqual({
      ...retried,
      outcome: 'retry',
    })
    expect((await settle(new Error('store down'))).settled).toEqual({
      ...retried,
      outcome: 'fault',
    })
  })

  it('runs one pass over the outbox for a callbacks message', async () => {
    const pass = await settle(new Error('not called'), callbacksMessage())
    expect(pass).toMatchObject({ settled: { settle: 'ack', outcome: 'callbacks' }, passes: 1 })
  })
})
