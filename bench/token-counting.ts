/**
 * Token counting time per text shape (o200k), before and after bounded counting pieces:
 *
 * - before: gpt-tokenizer's `countTokens` on the whole text, as the service counted until the
 *   pieces — at a few sizes, since it is quadratic in a run without spaces (at 1 MB a letter
 *   run would take hours);
 * - after, sync: the service's tokenizer (`loadTokenizer`: bounded pieces, one token per cut);
 * - after, paced: `TokenCounter.warm`, as the compaction decision counts, with the longest stretch
 *   the event loop was held (a 0 ms interval timer's largest gap) and the CPU it took.
 *
 * Figures, not pass/fail (the machine is shared: compare CPU ms, not wall time).
 *
 *   npx tsx bench/token-counting.ts [--mb 1] [--before-kb 64] [--shapes prose,base64,…]
 */

import { parseArgs } from 'node:util'
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base'
import { loadTokenizer } from '../src/core/compaction/bpe-tokenizer.ts'
import { TokenCounter } from '../src/core/compaction/token-counter.ts'
import { shapedText, TEXT_SHAPES, type TextShape } from '../test/support/text-shapes.ts'
import { median, percentile } from './support/stats.ts'

const { values } = parseArgs({
  options: {
    mb: { type: 'string', default: '1' },
    'before-kb': { type: 'string', default: '64' },
    shapes: { type: 'string', default: TEXT_SHAPES.join(',') },
  },
})
const AFTER_CHARS = Math.round(Number(values.mb) * 1_000_000)
const BEFORE_CHARS = Math.round(Number(values['before-kb']) * 1000)
const shapes = (values.shapes ?? '').split(',') as TextShape[]
const PLAIN = { disallowedSpecial: new Set<string>() }

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since)
  return (used.user + used.system) / 1000
}
const perMb = (ms: number, chars: number) => (ms * 1_000_000) / chars

const tokenizer = await loadTokenizer('o200k_base')
tokenizer.count('warm up the encoding and its code paths '.repeat(500))

console.log(`token counting, o200k_base (CPU ms per MB of text; 1 MB = 1,000,000 characters)`)
for (const shape of shapes) {
  // before: the library on the whole text, at growing sizes
  const before: string[] = []
  let beforeTokens = 0
  countTokens(shapedText(shape, 4000, 3), PLAIN)
  for (const chars of [BEFORE_CHARS / 4, BEFORE_CHARS / 2, BEFORE_CHARS]) {
    const text = shapedText(shape, chars, 7)
    const started = process.cpuUsage()
    beforeTokens = countTokens(text, PLAIN)
    before.push(`${(chars / 1000).toFixed(0)} KB ${perMb(cpuMs(started), chars).toFixed(0)}`)
  }
  const sample = shapedText(shape, BEFORE_CHARS, 7)
  const afterTokens = tokenizer.count(sample)

  // after: the same tokenizer the service uses, on the large text
  const text = shapedText(shape, AFTER_CHARS, 11)
  let started = process.cpuUsage()
  tokenizer.count(text)
  const syncMs = cpuMs(started)

  // after, paced: the counter yields between pieces; how long was the loop held at most?
  // (Another text: the merge cache must not have seen this one.)
  const paced = shapedText(shape, AFTER_CHARS, 13)
  const counter = new TokenCounter(tokenizer)
  let last = performance.now()
  const gaps: number[] = []
  const monitor = setInterval(() => {
    const now = performance.now()
    gaps.push(now - last)
    last = now
  }, 0)
  started = process.cpuUsage()
  const wallStart = performance.now()
  last = wallStart
  await counter.warm([{ role: 'tool', tool_call_id: 'bench', content: paced }])
  const pacedWall = performance.now() - wallStart
  const pacedCpu = cpuMs(started)
  clearInterval(monitor)
  gaps.push(performance.now() - last)

  const excess = ((afterTokens - beforeTokens) / beforeTokens) * 100
  console.log(`\n${shape}`)
  console.log(`  before (whole text)   ms/MB at ${before.join(', ')}`)
  console.log(
    `  after (pieces, sync)  ms/MB ${perMb(syncMs, AFTER_CHARS).toFixed(0)} at ${AFTER_CHARS / 1000} KB`,
  )
  console.log(
    `  after (paced warm)    ms/MB ${perMb(pacedCpu, AFTER_CHARS).toFixed(0)} CPU, ${pacedWall.toFixed(0)} ms wall; event loop held p50 ${median(gaps).toFixed(1)}, p99 ${percentile(gaps, 99).toFixed(1)}, max ${Math.max(...gaps).toFixed(1)} ms`,
  )
  console.log(
    `  tokens at ${BEFORE_CHARS / 1000} KB: exact ${beforeTokens}, pieces ${afterTokens} (+${excess.toFixed(2)} %)`,
  )
}
