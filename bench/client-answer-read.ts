/**
 * What the clients' bounds cost the typed client's reads: an events page of 1000 events (read
 * through `boundedBody`, its lines counted, since the page bound) and a turn's JSON answer of
 * the same 1000 events (its bytes counted as before, now through `byteCount`), against the same
 * client of an earlier revision (bench/support/before-tree.ts) in one interleaved run, each
 * round alternating which goes first. The answers come from an in-memory `fetch` in 64 KiB
 * chunks, so only the client's own work is measured, no network.
 *
 * Prints, per round, the mean µs per read of each revision, then the medians and HEAD's ratio.
 *
 *   npx tsx bench/client-answer-read.ts [--before main] [--reads 400] [--rounds 7]
 */
import { parseArgs } from 'node:util'
import { checkoutBefore } from './support/before-tree.ts'
import { median } from './support/stats.ts'

const { values } = parseArgs({
  options: {
    before: { type: 'string', default: 'main' },
    reads: { type: 'string', default: '400' },
    rounds: { type: 'string', default: '7' },
  },
})
const reads = Number(values.reads)
const rounds = Number(values.rounds)

const text = (i: number) => `item ${i}: ${'lorem ipsum dolor sit amet '.repeat(8)}`
const events = Array.from({ length: 1000 }, (_, i) => ({
  type: 'item.completed',
  item: { id: `item_${i}`, type: 'agent_message', text: text(i) },
}))
const page = events
  .map((event, seq) => `${JSON.stringify({ seq, schema_version: '0.11.0', event })}\n`)
  .join('')
const turn = JSON.stringify({ turn_id: 't1', status: 'completed', events, next_seq: 1000 })

function chunked(body: string, headers: Record<string, string>): Response {
  const bytes = new TextEncoder().encode(body)
  let at = 0
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close()
      controller.enqueue(bytes.subarray(at, at + 65_536))
      at += 65_536
    },
  })
  return new Response(stream, { headers })
}

const fetch = async (request: Request) =>
  new URL(request.url).pathname.endsWith('/events')
    ? chunked(page, { 'content-type': 'application/x-ndjson', 'turnline-next-seq': '1000' })
    : chunked(turn, { 'content-type': 'application/json' })

interface Variant {
  label: string
  readPage: () => Promise<unknown>
  readJson: () => Promise<unknown>
}

async function variant(label: string, root: string): Promise<Variant> {
  const { TurnlineClient } = await import(`${root}/client/index.ts`)
  const client = new TurnlineClient({ baseUrl: 'http://bench.invalid', fetch })
  return {
    label,
    readPage: async () => {
      const got = await client.readEvents('s1')
      if (got.events.length !== 1000) throw new Error(`${label}: ${got.events.length} events`)
    },
    readJson: () => client.stepTurn('s1', { input: 'x' }),
  }
}

const before = await checkoutBefore(values.before)
try {
  const variants = [
    await variant(before.label, before.root),
    await variant('HEAD', new URL('..', import.meta.url).pathname),
  ]
  const times = new Map<string, { page: number[]; json: number[] }>()
  for (const v of variants) times.set(v.label, { page: [], json: [] })
  for (let round = 0; round <= rounds; round++) {
    // Round 0 warms up; each round alternates which revision goes first.
    const order = round % 2 === 0 ? variants : [...variants].reverse()
    for (const v of order) {
      for (const [kind, read] of [
        ['page', v.readPage],
        ['json', v.readJson],
      ] as const) {
        const started = process.hrtime.bigint()
        for (let i = 0; i < reads; i++) await read()
        const us = Number(process.hrtime.bigint() - started) / 1000 / reads
        if (round > 0) times.get(v.label)?.[kind].push(us)
      }
    }
    if (round > 0) {
      const line = variants.map((v) => {
        const t = times.get(v.label)
        return `${v.label}: page ${t?.page.at(-1)?.toFixed(0)} µs, json ${t?.json.at(-1)?.toFixed(1)} µs`
      })
      process.stderr.write(`round ${round}: ${line.join(' | ')}\n`)
    }
  }
  const [base, head] = variants.map((v) => times.get(v.label) ?? { page: [], json: [] })
  if (!base || !head) throw new Error('no figures')
  for (const kind of ['page', 'json'] as const) {
    const a = median(base[kind])
    const b = median(head[kind])
    process.stderr.write(
      `${kind}: median ${a.toFixed(1)} µs (${before.label}) / ${b.toFixed(1)} µs (HEAD) = ${(b / a).toFixed(3)}x\n`,
    )
  }
} finally {
  await before.remove()
}
