/**
 * Compaction decision cost on a history growing to 160k tokens (o200k tokenizer). Per turn:
 * the time of the decision (estimate + decide) and how many messages had to be tokenized, in a
 * warm process (one counter), in a stateless invocation (a fresh counter restored from the
 * provider-usage anchor) and cold (a fresh counter with no anchor). At the end: the time of the
 * continuity-tail selection and of building the summary request. Figures, not pass/fail.
 *
 *   npx tsx bench/compaction-decision.ts [--tokens 160000] [--seed 1]
 */
import { parseArgs } from 'node:util'
import type { HistoryMessage } from '../src/contract/history-message.ts'
import { loadTokenizer } from '../src/core/compaction/bpe-tokenizer.ts'
import { selectContinuity } from '../src/core/compaction/continuity-tail.ts'
import { planLocalCompaction } from '../src/core/compaction/local-compaction.ts'
import { compactionThresholds, decideCompaction } from '../src/core/compaction/thresholds.ts'
import { TokenCounter } from '../src/core/compaction/token-counter.ts'
import { seededRandom, turn } from '../test/support/compaction-histories.ts'
import { median, percentile } from './support/stats.ts'

const { values } = parseArgs({
  options: {
    tokens: { type: 'string', default: '160000' },
    seed: { type: 'string', default: '1' },
  },
})
const TARGET = Number(values.tokens)
const random = seededRandom(Number(values.seed))

const loadStart = performance.now()
const tokenizer = await loadTokenizer('o200k_base')
const loadMs = performance.now() - loadStart

// No threshold crossing stops the growth: the figures are about cost, not about compacting.
const thresholds = compactionThresholds({ maxContextTokens: 10_000_000 })
const warm = new TokenCounter(tokenizer)
const history: HistoryMessage[] = []
const prefix = warm.countPrefix('You are a careful coding agent working in a repository.')

interface Sample {
  warmMs: number
  warmTokenized: number
  statelessMs: number
  statelessTokenized: number
}
const samples: Sample[] = []
let anchor: { input_tokens: number; message_count: number } | undefined
let tokens = 0
let turns = 0

while (tokens < TARGET) {
  const messages = turn(
    turns,
    {
      rounds: Math.floor(random() * 4),
      callsPerRound: 1 + Math.floor(random() * 3),
      words: 40 + Math.floor(random() * 160),
    },
    random,
  )
  history.push(...messages)
  turns++

  // warm process: the same counter and array across turns
  let started = performance.now()
  const estimate = warm.estimate(history, prefix)
  decideCompaction({
    tokens: estimate.tokens,
    thresholds,
    enabled: true,
    pending: false,
    inToolLoop: false,
  })
  const warmMs = performance.now() - started

  // stateless invocation: a new counter over a rehydrated transcript, anchored on provider usage
  const rehydrated = history.map((message) => ({ ...message }))
  started = performance.now()
  const fresh = new TokenCounter(tokenizer)
  fresh.restoreAnchor(anchor)
  const stateless = fresh.estimate(rehydrated, prefix)
  decideCompaction({
    tokens: stateless.tokens,
    thresholds,
    enabled: true,
    pending: false,
    inToolLoop: false,
  })
  const statelessMs = performance.now() - started

  samples.push({
    warmMs,
    warmTokenized: estimate.tokenized,
    statelessMs,
    statelessTokenized: stateless.tokenized,
  })
  tokens = estimate.tokens
  // the provider reports the prompt it counted for this request
  anchor = { input_tokens: estimate.tokens, message_count: history.length }
}

const cold = new TokenCounter(tokenizer)
let started = performance.now()
const coldEstimate = cold.estimate(
  history.map((message) => ({ ...message })),
  prefix,
)
const coldMs = performance.now() - started

started = performance.now()
const selection = selectContinuity(history, {
  countTokens: (message) => warm.countMessage(message),
})
const tailMs = performance.now() - started

started = performance.now()
const plan = planLocalCompaction(history, {
  force: false,
  now: new Date().toISOString(),
  continuity: { countTokens: (message) => warm.countMessage(message) },
})
const planMs = performance.now() - started

const late = samples.slice(Math.floor(samples.length / 2))
const perTurn = (pick: (sample: Sample) => number, list = samples) => {
  const figures = list.map(pick)
  return `p50 ${median(figures).toFixed(3)}  p99 ${percentile(figures, 99).toFixed(3)}  max ${Math.max(...figures).toFixed(3)}`
}
const mean = (figures: number[]) => figures.reduce((a, b) => a + b, 0) / Math.max(1, figures.length)
const messagesPerTurn = history.length / turns

console.log(`compaction decision on a growing history (o200k_base, seed ${values.seed})`)
console.log(`  history: ${turns} turns, ${history.length} messages, ${tokens} estimated tokens`)
console.log(`  o200k load (lazy import, first use): ${loadMs.toFixed(1)} ms`)
console.log(`  messages added per turn: mean ${messagesPerTurn.toFixed(1)}`)
console.log('  warm process (one counter):')
console.log(`    decision ms          ${perTurn((s) => s.warmMs)}`)
console.log(`    decision ms, 2nd half ${perTurn((s) => s.warmMs, late)}`)
console.log(
  `    messages tokenized per turn: mean ${mean(samples.map((s) => s.warmTokenized)).toFixed(1)}, max ${Math.max(...samples.map((s) => s.warmTokenized))}`,
)
console.log('  stateless invocation (fresh counter + provider-usage anchor from engine state):')
console.log(`    decision ms          ${perTurn((s) => s.statelessMs)}`)
console.log(`    decision ms, 2nd half ${perTurn((s) => s.statelessMs, late)}`)
console.log(
  `    messages tokenized per turn: mean ${mean(samples.map((s) => s.statelessTokenized)).toFixed(1)}, max ${Math.max(...samples.map((s) => s.statelessTokenized))}`,
)
console.log(
  `  cold (fresh counter, no anchor) at ${history.length} messages: ${coldMs.toFixed(1)} ms, ${coldEstimate.tokenized} messages tokenized`,
)
console.log(
  `  tail selection at ${tokens} tokens: ${tailMs.toFixed(2)} ms → ${selection.tail.length} tail messages (${selection.tailTokens} tokens), ${selection.retainedUsers.length} retained users`,
)
console.log(
  `  local compaction plan (tail + summary request): ${planMs.toFixed(2)} ms, request ${plan.kind === 'summarize' ? plan.request[1]?.content.length : 0} chars`,
)
