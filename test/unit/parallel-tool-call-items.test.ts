import { describe, expect, it } from 'vitest'
import type { ToolCall } from '../../src/contract/history-message.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { ModelStreamEvent } from '../../src/ports/model-client.ts'
import { pick, type Rng, rng } from '../support/fuzz-values.ts'
import { completedWithCalls, stepOver } from '../support/model-step-run.ts'

/**
 * Each call of a model's answer is given the item its stream opened for it: the first item with
 * the call's id (streamed, or opened for an earlier call the stream did not show), else the one
 * streamed at the call's index, else a new item. The items are now found through an index of the
 * call ids (one lookup a call, not a scan of every item); this checks the outcome against that
 * rule, applied the slow way, on random answers: the calls in the response's order, each one's
 * item, and the events in their order.
 */
async function step(events: ModelStreamEvent[]) {
  const { result, events: emitted } = await stepOver(events)
  return { tools: result.tools, events: emitted }
}

/** A random answer: calls streamed in interleaved pieces, ids early, late or never, and a response. */
function randomAnswer(r: Rng): { stream: ModelStreamEvent[]; calls: ToolCall[] } {
  const streamed = Math.floor(r() * 12)
  const ids = ['call_a', 'call_b', 'call_c', 'call_d', '']
  const pieces: ModelStreamEvent[] = []
  for (let index = 0; index < streamed; index++) {
    const id = pick(r, ids)
    const idAt = Math.floor(r() * 3) // 0: first piece, 1: second, 2: never
    for (let piece = 0; piece < 1 + Math.floor(r() * 3); piece++) {
      pieces.push({
        type: 'tool_call_delta',
        index: r() < 0.1 ? index + 1000 : index,
        ...(piece === idAt && id ? { id } : {}),
        ...(piece === 0 ? { name: `tool_${index}` } : {}),
        argumentsDelta: piece === 0 ? '{"n":' : `${piece}`,
      })
    }
  }
  // Interleave the pieces of different calls, keeping each call's pieces in order.
  const stream: ModelStreamEvent[] = []
  const queues = new Map<number, ModelStreamEvent[]>()
  for (const p of pieces) {
    const key = p.type === 'tool_call_delta' ? p.index : -1
    queues.set(key, [...(queues.get(key) ?? []), p])
  }
  while (queues.size > 0) {
    const key = pick(r, [...queues.keys()])
    const queue = queues.get(key) ?? []
    stream.push(queue.shift() as ModelStreamEvent)
    if (queue.length === 0) queues.delete(key)
  }
  const calls = Array.from({ length: Math.floor(r() * 14) }, (_, i) => ({
    id: r() < 0.8 ? pick(r, ids) || `call_x${i}` : `call_new_${i}`,
    name: `tool_${i}`,
    arguments: '{}',
  }))
  stream.push(completedWithCalls(calls))
  return { stream, calls }
}

/** The rule, the slow way: every item the stream opened is scanned for each call. */
function expectedItems(events: ThreadEvent[], stream: ModelStreamEvent[], calls: ToolCall[]) {
  const opened = new Map<number, { itemId: string; id: string }>()
  let started = 0
  const streamedCalls = new Set(
    stream.flatMap((e) => (e.type === 'tool_call_delta' ? [e.index] : [])),
  )
  const startedIds = events
    .flatMap((e) => (e.type === 'item.started' ? [e.item.id] : []))
    .slice(0, streamedCalls.size)
  for (const event of stream) {
    if (event.type !== 'tool_call_delta') continue
    const state = opened.get(event.index) ?? { itemId: startedIds[started++] as string, id: '' }
    if (event.id) state.id = event.id
    opened.set(event.index, state)
  }
  let next = startedIds.length
  const added: { itemId: string; id: string }[] = []
  const itemIds = calls.map((call, index) => {
    const candidates = [...opened.values(), ...added]
    const found = candidates.find((s) => s.id === call.id) ?? opened.get(index)
    if (found) return found.itemId
    const itemId = `item_${next++}`
    added.push({ itemId, id: call.id })
    return itemId
  })
  return { itemIds, added: added.map((a) => a.itemId) }
}

describe('parallel tool calls: each call and its item', () => {
  it('matches the first item streamed with its id, else its index, on 3,000 random answers', async () => {
    for (let seed = 1; seed <= 3_000; seed++) {
      const { stream, calls } = randomAnswer(rng(seed))
      const { tools, events } = await step(stream)
      expect(tools.map((t) => t.call)).toEqual(calls)
      const { itemIds, added } = expectedItems(events, stream, calls)
      expect(
        tools.map((t) => t.itemId),
        `seed ${seed}`,
      ).toEqual(itemIds)
      // Items for calls the stream did not show open after every streamed event, in call order.
      const tail = events.slice(events.length - added.length)
      expect(tail.map((e) => e.type === 'item.started' && e.item.id)).toEqual(added)
    }
  })

  it('4,000 calls in one answer: each its own item, in the order streamed', async () => {
    const count = 4_000
    const stream: ModelStreamEvent[] = []
    const calls: ToolCall[] = []
    for (let index = 0; index < count; index++) {
      const call = { id: `call_${index}`, name: 'read_file', arguments: `{"path":"f${index}"}` }
      calls.push(call)
      stream.push({
        type: 'tool_call_delta',
        index,
        id: call.id,
        name: call.name,
        argumentsDelta: call.arguments,
      })
    }
    stream.push(completedWithCalls(calls))
    const { tools, events } = await step(stream)
    expect(tools.map((t) => [t.itemId, t.call.id])).toEqual(
      calls.map((c, i) => [`item_${i}`, c.id]),
    )
    expect(events.map((e) => [e.type, 'item' in e && e.item.id])).toEqual(
      calls.flatMap((_, i) => [
        ['item.started', `item_${i}`],
        ['item.updated', `item_${i}`],
      ]),
    )
  })
})
