/**
 * A compaction of a history of many small protocol groups (one-word user messages): the time of
 * planning it (the continuity tail's selection, with its summary request) and of completing it
 * under a summary longer than what it replaces (the tail gives up every group). Both walked the
 * tail's groups once per group kept or given up; the figures show whether they still grow with
 * the square of the tail. Medians of `--runs`, in one process. Figures, not pass/fail.
 *
 *   npx tsx bench/compaction-small-groups.ts [--messages 20000] [--runs 9]
 */
import { parseArgs } from 'node:util'
import type { HistoryMessage } from '../src/contract/history-message.ts'
import { buildMemoryEnvelope } from '../src/core/compaction/build-envelope.ts'
import {
  completeLocalCompaction,
  planLocalCompaction,
} from '../src/core/compaction/local-compaction.ts'
import { TokenCounter } from '../src/core/compaction/token-counter.ts'
import { approximateTokenizer } from '../src/ports/tokenizer.ts'
import { median } from './support/stats.ts'

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '9' },
  },
})
const count = Number(values.messages)
const runs = Number(values.runs)
const history: HistoryMessage[] = Array.from({ length: count }, (_, i) => ({
  role: 'user',
  content: `word${i % 10}`,
}))
const counter = new TokenCounter(approximateTokenizer)
const continuity = { countTokens: (message: HistoryMessage) => counter.countMessage(message) }
const envelope = buildMemoryEnvelope({ sessionId: 's', summary: 'S', generatedAt: 'now' })
const summary = 'S'.repeat(8 * count)

const plans: number[] = []
const completes: number[] = []
let tail = 0
for (let run = 0; run < runs; run++) {
  const start = performance.now()
  const plan = planLocalCompaction(history, { force: true, now: 'now', continuity })
  const planned = performance.now()
  if (plan.kind !== 'summarize') throw new Error('expected a plan')
  completeLocalCompaction(plan, summary, envelope, 'start')
  completes.push(performance.now() - planned)
  plans.push(planned - start)
  tail = plan.selection.tail.length
}
console.log(
  JSON.stringify({
    messages: count,
    tail_groups: tail,
    plan_ms_median: Number(median(plans).toFixed(1)),
    complete_ms_median: Number(median(completes).toFixed(1)),
    runs,
  }),
)
