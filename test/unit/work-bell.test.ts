import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { consumeBells, MAX_RINGS } from '../../functions/background/bell-consumer.ts'
import { QueueBells } from '../../functions/background/queue-bells.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import {
  callbacksBell,
  parseWorkBell,
  serializeWorkBell,
  type WorkBell,
  workBell,
} from '../../src/contract/work-bell.ts'
import type { WorkLocation } from '../../src/contract/work-record.ts'
import type { WorkRunOutcome } from '../../src/core/session-api.ts'

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/deployment/${name}`, import.meta.url), 'utf8')

const at: WorkLocation = { tenant: 'acme', session_id: 's-1', work_id: 'ab'.repeat(16) }
const next: WorkLocation = { tenant: 'acme', session_id: 'loop.l', work_id: 'cd'.repeat(16) }

describe('work bells (contract/work-bell.ts)', () => {
  it('reads the stored fixtures and writes them back byte for byte', () => {
    for (const name of ['work-bell.json', 'callbacks-bell.json']) {
      const bell = parseWorkBell(fixture(name))
      expect(serializeWorkBell(bell)).toBe(fixture(name))
    }
    expect(parseWorkBell(fixture('callbacks-bell.json'))).toEqual(callbacksBell())
    const stored = JSON.parse(fixture('work-bell.json')) as Record<string, unknown>
    for (const [change, code] of [
      [{ version: 2 }, 'unsupported_version'],
      [{ format: 'other' }, 'corrupt_data'],
      [{ work: { ...at, work_id: 'nope' } }, 'corrupt_data'],
    ] as const) {
      let thrown: unknown
      try {
        parseWorkBell(JSON.stringify({ ...stored, ...change }))
      } catch (error) {
        thrown = error
      }
      expect(isTurnlineError(thrown, code), String(thrown)).toBe(true)
    }
  })
})

/** The consumer over scripted outcomes, with the bells it sends recorded. */
function consumer(outcomes: Record<string, WorkRunOutcome | Error>) {
  const sent: { bell: WorkBell; delay: number }[] = []
  const bells = new QueueBells(
    async (bell, delay) => {
      sent.push({ bell, delay })
    },
    () => {},
  )
  let passes = 0
  const ran: string[] = []
  const consume = (messages: { id: string; bell: WorkBell | string }[]) =>
    consumeBells(
      {
        api: {
          async runWork(location) {
            ran.push(location.work_id)
            const outcome = outcomes[location.work_id]
            if (outcome instanceof Error) throw outcome
            return outcome ?? { outcome: 'gone' }
          },
        },
        bells,
        deliverCallbacks: async () => {
          passes++
        },
        log: () => {},
      },
      messages.map(({ id, bell }) => ({
        id,
        body: typeof bell === 'string' ? bell : serializeWorkBell(bell),
      })),
    )
  return { consume, sent, ran, passes: () => passes }
}

describe('consumeBells (functions/background/bell-consumer.ts)', () => {
  it('rings a loop run’s next step at once, and one outbox pass for any number of its bells', async () => {
    const c = consumer({
      [at.work_id]: { outcome: 'done', status: 'completed', next },
    })
    const failed = await c.consume([
      { id: 'm1', bell: workBell(at) },
      { id: 'm2', bell: callbacksBell() },
      { id: 'm3', bell: callbacksBell() },
    ])
    expect(failed).toEqual([])
    expect(c.sent).toEqual([{ bell: workBell(next), delay: 0 }])
    expect(c.passes()).toBe(1)
  })

  it('rings busy work again after its Retry-After, at most MAX_RINGS times', async () => {
    const c = consumer({ [at.work_id]: { outcome: 'busy', retryAfterMs: 2500 } })
    await c.consume([{ id: 'm1', bell: workBell(at) }])
    expect(c.sent).toEqual([{ bell: workBell(at, 1), delay: 3 }])
    await c.consume([{ id: 'm2', bell: workBell(at, MAX_RINGS) }])
    expect(c.sent).toHaveLength(1)
  })

  it('reports a run that threw as failed, and drops a message that is no bell', async () => {
    const c = consumer({ [at.work_id]: new Error('the store is down') })
    const failed = await c.consume([
      { id: 'm1', bell: workBell(at) },
      { id: 'm2', bell: 'not json' },
      { id: 'm3', bell: workBell(next) },
    ])
    expect(failed).toEqual(['m1'])
    expect(c.ran.sort()).toEqual([at.work_id, next.work_id].sort())
  })
})
