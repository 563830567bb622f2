import { describe, expect, it } from 'vitest'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import { ThreadEventSchema } from '../../src/contract/thread-event.ts'
import { planIntentBoundary } from '../../src/core/turn/intent-boundary.ts'
import { APPLIED_INTENT_WINDOW, mergeApplied } from '../../src/store/session-snapshot.ts'

const intent = (id: string, text = `text of ${id}`) => ({ id, text })

describe('steering intents at a turn boundary', () => {
  it('applies every new pending intent in queue order, tagged with its id', () => {
    const plan = planIntentBoundary({
      pending: [intent('a', 'first'), intent('b', 'second'), intent('c', 'third')],
      appliedWindow: [],
      history: [{ role: 'user', content: 'hello' }],
    })
    expect(plan.apply.map((i) => i.id)).toEqual(['a', 'b', 'c'])
    expect(plan.messages).toEqual([
      { role: 'user', content: 'first', intent_id: 'a' },
      { role: 'user', content: 'second', intent_id: 'b' },
      { role: 'user', content: 'third', intent_id: 'c' },
    ])
    expect(plan.appliedIds).toEqual(['a', 'b', 'c'])
    expect(plan.ack).toEqual(['a', 'b', 'c'])
    expect(plan.alreadyApplied).toEqual([])
  })

  it('does not replay ids in the applied window, but acknowledges them', () => {
    const plan = planIntentBoundary({
      pending: [intent('a'), intent('b'), intent('c')],
      appliedWindow: ['x', 'b'],
      history: [],
    })
    expect(plan.apply.map((i) => i.id)).toEqual(['a', 'c'])
    expect(plan.alreadyApplied).toEqual(['b'])
    expect(plan.ack.sort()).toEqual(['a', 'b', 'c'])
    expect(plan.appliedIds).toEqual(['a', 'c'])
  })

  it('does not replay ids found on a tagged user message of the transcript', () => {
    const history: HistoryMessage[] = [
      { role: 'user', content: 'start' },
      { role: 'user', content: 'steer', intent_id: 'b' },
      { role: 'assistant', content: 'ok' },
    ]
    const plan = planIntentBoundary({
      pending: [intent('a'), intent('b')],
      appliedWindow: [],
      history,
    })
    expect(plan.apply.map((i) => i.id)).toEqual(['a'])
    expect(plan.alreadyApplied).toEqual(['b'])
  })

  it('keeps identical text under a different id (no dedup by text)', () => {
    const history: HistoryMessage[] = [{ role: 'user', content: 'run the tests', intent_id: 'old' }]
    const plan = planIntentBoundary({
      pending: [intent('old', 'run the tests'), intent('new', 'run the tests')],
      appliedWindow: [],
      history,
    })
    expect(plan.messages).toEqual([{ role: 'user', content: 'run the tests', intent_id: 'new' }])
  })

  it('applies a duplicated pending id once', () => {
    const plan = planIntentBoundary({
      pending: [intent('a'), intent('a'), intent('b')],
      appliedWindow: [],
      history: [],
    })
    expect(plan.appliedIds).toEqual(['a', 'b'])
    expect(plan.ack).toEqual(['a', 'b'])
  })

  it('emits one queued interjection per applied intent', () => {
    const plan = planIntentBoundary({
      pending: [intent('a'), intent('b')],
      appliedWindow: ['b'],
      history: [],
    })
    expect(plan.events).toEqual([
      { type: 'interjected', source: 'queue', image_count: 0, redirect_kind: 'interjection' },
    ])
    for (const event of plan.events) expect(ThreadEventSchema.parse(event)).toEqual(event)
    expect(planIntentBoundary({ pending: [], appliedWindow: [], history: [] })).toMatchObject({
      apply: [],
      messages: [],
      ack: [],
      events: [],
    })
  })

  it('stays exactly-once across a commit followed by a lost acknowledgement', () => {
    // turn 1 applies a and b; the batch commits (window += a, b) but the ack never happens
    const pending = [intent('a'), intent('b')]
    const first = planIntentBoundary({ pending, appliedWindow: [], history: [] })
    const window = mergeApplied([], first.appliedIds)
    const history = [...first.messages]
    // turn 2 sees the same pending list plus a new intent
    const second = planIntentBoundary({
      pending: [...pending, intent('c')],
      appliedWindow: window,
      history,
    })
    expect(second.apply.map((i) => i.id)).toEqual(['c'])
    expect(second.ack.sort()).toEqual(['a', 'b', 'c'])
    // after a context reset the transcript is gone, the window still protects
    const third = planIntentBoundary({
      pending,
      appliedWindow: mergeApplied(window, second.appliedIds),
      history: [],
    })
    expect(third.apply).toEqual([])
  })

  it('relies on the tagged history once an id has left the 64-id window', () => {
    const old = Array.from({ length: APPLIED_INTENT_WINDOW + 1 }, (_, i) => `id-${i}`)
    const window = mergeApplied([], old)
    expect(window).not.toContain('id-0')
    const tagged = planIntentBoundary({
      pending: [intent('id-0')],
      appliedWindow: window,
      history: [{ role: 'user', content: 'x', intent_id: 'id-0' }],
    })
    expect(tagged.apply).toEqual([])
    const untagged = planIntentBoundary({
      pending: [intent('id-0')],
      appliedWindow: window,
      history: [],
    })
    expect(untagged.apply.map((i) => i.id)).toEqual(['id-0'])
  })
})
