/**
 * A model answer with many parallel tool calls: the engine's model step (`runModelStep`) over
 * the real OpenAI adapter, streaming from the mock model (Hono, Chat Completions), by doubling
 * the number of calls. Figures, not pass/fail.
 *
 *   npx tsx bench/parallel-tool-calls.ts [--calls 500,1000,2000,4000] [--rounds 5] [--before main]
 *
 * For each count: the whole step (the stream read, each call's items emitted), the part after
 * the model's completed response (the calls of the response matched to the items the stream
 * opened), and the settling of the round's calls one after another in the turn's state, as the
 * tool loop settles them (`call_settled` through `TurnMachine`, the tools' own work left out),
 * medians of `--rounds`. With `--before`, that revision's model step (extracted with
 * `git archive`) is measured in the same process, rounds interleaved, in both orders.
 * 4,000 calls is about the most one invocation holds (two events a call, 8,192 events).
 */
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createOpenAIModelClient } from '../adapters/openai/openai-model-client.ts'
import type { EventDispatcher } from '../src/core/engine/event-dispatcher.ts'
import type { runModelStep } from '../src/core/model/model-step.ts'
import type { TurnMachine } from '../src/core/turn/turn-machine.ts'
import type { ModelRequest, ModelStreamEvent } from '../src/ports/model-client.ts'
import { freshEngineState } from '../test/support/fresh-engine-state.ts'
import { startMockOpenAI } from '../test/support/mock-openai.ts'
import { type BeforeTree, checkoutBefore } from './support/before-tree.ts'
import { median } from './support/stats.ts'

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '500,1000,2000,4000' },
    rounds: { type: 'string', default: '5' },
    before: { type: 'string' },
  },
})
const COUNTS = (values.calls ?? '').split(',').map(Number)
const ROUNDS = Number(values.rounds)

/** A revision's model step and dispatcher (the other revision's, loaded at run time, alike). */
interface Variant {
  label: string
  step: typeof runModelStep
  Dispatcher: typeof EventDispatcher
  Machine: typeof TurnMachine
}

async function variantAt(root: string, label: string): Promise<Variant> {
  const step = await import(join(root, 'src/core/model/model-step.ts'))
  const dispatcher = await import(join(root, 'src/core/engine/event-dispatcher.ts'))
  const machine = await import(join(root, 'src/core/turn/turn-machine.ts'))
  return {
    label,
    step: step.runModelStep,
    Dispatcher: dispatcher.EventDispatcher,
    Machine: machine.TurnMachine,
  }
}

const mock = await startMockOpenAI()
const model = createOpenAIModelClient({ apiKey: 'sk-bench', baseURL: mock.baseURL })
const request = (): ModelRequest =>
  ({
    model: 'gpt-4o-mini',
    api: 'chat',
    messages: [{ role: 'user', content: 'go' }],
    tools: [],
  }) as unknown as ModelRequest

/** One step of `calls` calls; total ms and ms after the completed response. */
async function once(variant: Variant, calls: number) {
  mock.enqueue({
    toolCalls: Array.from({ length: calls }, (_, i) => ({
      id: `call_${i}`,
      name: 'read_file',
      arguments: `{"path":"f${i}.txt"}`,
    })),
    chunkSize: 64,
  })
  let completedAt = 0
  const timed = {
    async *stream(req: ModelRequest): AsyncIterable<ModelStreamEvent> {
      for await (const event of model.stream(req)) {
        if (event.type === 'completed') completedAt = performance.now()
        yield event
      }
    },
  }
  let next = 0
  const start = performance.now()
  const result = await variant.step({
    dispatcher: new variant.Dispatcher(0),
    nextItemId: () => `item_${next++}`,
    model: timed,
    request: request(),
  })
  const end = performance.now()
  if (result.tools.length !== calls) throw new Error(`${result.tools.length} of ${calls} calls`)
  return { total: end - start, after: end - completedAt }
}

/** ms to settle a round of `calls` calls, first to last, in an open turn's state. */
function settle(variant: Variant, calls: number): number {
  const turn = variant.Machine.opening(freshEngineState())
  turn.apply({
    type: 'tool_round_requested',
    calls: Array.from({ length: calls }, (_, i) => ({
      item_id: `item_${i}`,
      tool_call_id: `call_${i}`,
      tool_name: 'read_file',
      arguments: `{"path":"f${i}.txt"}`,
    })),
  })
  turn.apply({ type: 'tools_started' })
  const start = performance.now()
  for (let i = 0; i < calls; i++) turn.apply({ type: 'call_settled', itemId: `item_${i}` })
  const end = performance.now()
  if (turn.open.pending_calls.length !== 0) throw new Error('calls left pending')
  return end - start
}

let before: BeforeTree | undefined
const variants: Variant[] = [await variantAt(join(import.meta.dirname, '..'), 'this tree')]
if (values.before) {
  before = await checkoutBefore(values.before)
  variants.unshift(await variantAt(before.root, before.label))
}
try {
  process.stdout.write(`load ${(await import('node:os')).loadavg().map((l) => l.toFixed(2))}\n`)
  for (const calls of COUNTS) {
    const samples = new Map(
      variants.map((v) => [
        v.label,
        { total: [] as number[], after: [] as number[], settle: [] as number[] },
      ]),
    )
    await once(variants[0] as Variant, calls) // warm-up
    for (const variant of variants) settle(variant, calls)
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? variants : [...variants].reverse()
      for (const variant of order) {
        const { total, after } = await once(variant, calls)
        samples.get(variant.label)?.total.push(total)
        samples.get(variant.label)?.after.push(after)
        samples.get(variant.label)?.settle.push(settle(variant, calls))
      }
    }
    for (const [label, s] of samples) {
      process.stdout.write(
        `${calls} calls  ${label.padEnd(24)} step ${median(s.total).toFixed(1)} ms, after the response ${median(s.after).toFixed(2)} ms, settling the calls ${median(s.settle).toFixed(2)} ms\n`,
      )
    }
  }
  process.stdout.write(`load ${(await import('node:os')).loadavg().map((l) => l.toFixed(2))}\n`)
} finally {
  await before?.remove()
  await mock.close()
}
