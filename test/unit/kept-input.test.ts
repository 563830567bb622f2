import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { MemoryTenantLimiter } from '../../adapters/memory/memory-tenant-limiter.ts'
import { tenantAdmission } from '../../functions/tenancy/tenant-admission.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import type { OutputKeeping } from '../../src/core/tools/kept-output.ts'
import { namesInputArtifact } from '../../src/core/tools/output-preview.ts'
import { tenantOutputQuota } from '../../src/core/tools/session-outputs.ts'
import { keepLongInput, keepLongMessages, keepLongText } from '../../src/core/turn/kept-input.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { OutputArtifacts } from '../../src/store/output-artifacts.ts'
import { useScriptedEngine } from '../support/scripted-engine.ts'

const LIMIT = 64 * 1024

function keepingOf(options: { maxBytes?: number; maxSessionBytes?: number; perDay?: number }) {
  const limiter = new MemoryTenantLimiter()
  const admission = tenantAdmission({
    limiter,
    defaults: options.perDay === undefined ? {} : { outputBytesPerDay: options.perDay },
    slotTtlMs: 60_000,
    reservationTtlMs: 60_000,
    defaultOutputTokens: 1000,
    clock: systemClock,
  })
  const keeping: OutputKeeping = {
    artifacts: new OutputArtifacts(new MemoryObjectStore(), 't1/w/.vtcode/sessions/s/'),
    maxBytes: options.maxBytes ?? 64 << 20,
    ...(options.maxSessionBytes === undefined ? {} : { maxSessionBytes: options.maxSessionBytes }),
    quota: tenantOutputQuota(admission, 't1'),
  }
  return { keeping, used: async () => (await limiter.usageToday('t1')).outputBytes }
}

const options = (keeping: OutputKeeping) => ({ keeping, limit: LIMIT, now: () => Date.now() })

async function readBack(keeping: OutputKeeping, id: string): Promise<string> {
  const opened = await keeping.artifacts.open(id)
  const parts: Uint8Array[] = []
  for await (const part of opened.read(0, opened.artifact.size)) parts.push(part)
  return Buffer.concat(parts).toString('utf8')
}

/** `lines` numbered lines with characters of 1 to 4 UTF-8 bytes, a pair split by no slice. */
function longText(lines: number): string {
  return Array.from({ length: lines }, (_, n) => `line ${n} é€😀 ${'x'.repeat(40)}`).join('\n')
}

describe('a turn input over the inline limit', () => {
  it('at the limit stays whole; one byte more is kept and previewed', async () => {
    const { keeping } = keepingOf({})
    const exact = 'a'.repeat(LIMIT)
    expect(await keepLongInput(exact, options(keeping))).toEqual({ input: exact, artifacts: [] })
    // 2-byte characters: LIMIT bytes exactly, then one byte more
    const wide = 'é'.repeat(LIMIT / 2)
    expect((await keepLongInput(wide, options(keeping))).artifacts).toEqual([])
    const over = `${wide}b`
    const kept = await keepLongInput(over, options(keeping))
    expect(kept.artifacts).toHaveLength(1)
    expect(kept.artifacts[0]?.size).toBe(LIMIT + 1)
    expect(await readBack(keeping, kept.artifacts[0]?.artifact_id ?? '')).toBe(over)
    expect(kept.input).toContain(`[input of 65,537 bytes (1 lines) kept whole as artifact`)
    expect(Buffer.byteLength(kept.input as string)).toBeLessThan(LIMIT)
  })

  it('the preview: head, notice naming the artifact and how to read it, tail; the text reads back byte-identical', async () => {
    const { keeping, used } = keepingOf({ perDay: 10 << 20 })
    const text = longText(40_000)
    const bytes = Buffer.byteLength(text)
    const kept = await keepLongInput(text, options(keeping))
    const [artifact] = kept.artifacts
    if (!artifact) throw new Error('not kept')
    expect(artifact).toEqual({
      artifact_id: expect.stringMatching(/^out_[0-9a-f]{32}$/),
      size: bytes,
      lines: 40_000,
    })
    const preview = kept.input as string
    expect(preview.startsWith(text.slice(0, 8000))).toBe(true)
    expect(preview.endsWith(text.slice(-2000))).toBe(true)
    expect(preview).toContain(
      `[input of ${bytes.toLocaleString('en-US')} bytes (40,000 lines) kept whole as artifact ${artifact.artifact_id};`,
    )
    expect(preview).toContain(`read_tool_output {"artifact_id":"${artifact.artifact_id}"}`)
    expect(Buffer.byteLength(preview)).toBeLessThan(21 * 1024 + 512)
    expect(await readBack(keeping, artifact.artifact_id)).toBe(text)
    expect(await used()).toBe(bytes)
    // the same text again is the same artifact, stored once
    const again = await keepLongInput(text, options(keeping))
    expect(again.artifacts[0]?.artifact_id).toBe(artifact.artifact_id)
  })

  it('parts: the longest texts are kept until the text is within the limit; images stay', async () => {
    const { keeping } = keepingOf({})
    const image = { type: 'input_image' as const, image_url: 'https://example.com/a.png' }
    const input = [
      { type: 'input_text' as const, text: 'short question' },
      { type: 'input_text' as const, text: 'b'.repeat(30_000) },
      image,
      { type: 'input_text' as const, text: 'c'.repeat(200_000) },
    ]
    const kept = await keepLongInput(input, options(keeping))
    expect(kept.artifacts.map((a) => a.size)).toEqual([200_000])
    const parts = kept.input as typeof input
    expect(parts[0]).toEqual(input[0])
    expect(parts[1]).toEqual(input[1])
    expect(parts[2]).toEqual(image)
    expect(JSON.stringify(parts[3])).toContain('[input of 200,000 bytes')
    // two long texts together over the limit: both kept, in their order
    const both = await keepLongInput(
      [
        { type: 'input_text', text: 'd'.repeat(60_000) },
        { type: 'input_text', text: 'e'.repeat(70_000) },
      ],
      options(keeping),
    )
    expect(both.artifacts.map((a) => a.size)).toEqual([60_000, 70_000])
  })

  it('over the caps: 413 naming the setting, 429 over the daily quota; nothing kept or counted', async () => {
    const text = 'z'.repeat(3 << 20)
    const own = keepingOf({ maxBytes: 2 << 20 })
    const tooBig = await keepLongInput(text, options(own.keeping)).catch((e: unknown) => e)
    expect(isTurnlineError(tooBig, 'payload_too_large')).toBe(true)
    expect(String((tooBig as Error).message)).toContain('TURNLINE_TOOL_MAX_OUTPUT_BYTES')
    expect(await own.keeping.artifacts.storedBytes()).toBe(0)

    const session = keepingOf({ maxSessionBytes: 1 << 20 })
    const full = await keepLongInput(text, options(session.keeping)).catch((e: unknown) => e)
    expect(isTurnlineError(full, 'payload_too_large')).toBe(true)
    expect(String((full as Error).message)).toContain('TURNLINE_TOOL_MAX_SESSION_OUTPUT_BYTES')

    const daily = keepingOf({ perDay: 1 << 20 })
    const refused = await keepLongInput(text, options(daily.keeping)).catch((e: unknown) => e)
    expect(isTurnlineError(refused, 'quota_exceeded')).toBe(true)
    expect(String((refused as Error).message)).toContain('output_bytes_per_day')
    expect((refused as { retryAfter?: number }).retryAfter).toBeGreaterThan(0)
    expect(await daily.used()).toBe(0)
    expect(await daily.keeping.artifacts.storedBytes()).toBe(0)
  })

  it("keepLongText: a client's tool output is previewed as an output, a short text stays; the transcript then names it", async () => {
    const { keeping } = keepingOf({})
    expect(await keepLongText('short', options(keeping), 'output')).toBe('short')
    const text = longText(3000)
    const preview = await keepLongText(text, options(keeping), 'output')
    expect(preview).toContain(`[output of ${Buffer.byteLength(text).toLocaleString('en-US')} bytes`)
    const id = /kept whole as artifact (out_[0-9a-f]{32})/.exec(preview)?.[1] ?? ''
    expect(await readBack(keeping, id)).toBe(text)
    expect(namesInputArtifact({ role: 'tool', content: preview })).toBe(true)
    expect(namesInputArtifact({ role: 'user', content: preview })).toBe(false)
    expect(namesInputArtifact({ role: 'assistant', content: preview })).toBe(false)
    const seeded = await keepLongMessages(
      [
        { role: 'user', content: 'run it' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'c', name: 'f', arguments: '{}' }] },
        { role: 'tool', tool_call_id: 'c', content: text },
      ],
      options(keeping),
    )
    expect(seeded[0]).toEqual({ role: 'user', content: 'run it' })
    expect(seeded[2]).toEqual({ role: 'tool', tool_call_id: 'c', content: preview })
  })
})

const fixture = useScriptedEngine()

describe('a long turn input in the engine', () => {
  it('the model reads a preview and pages through the rest; the record shows the preview and the artifact', async () => {
    const { service, model } = fixture.engine
    const { session_id } = await service.createSession('t1', {})
    const text = longText(20_000)
    const middle = Math.floor(Buffer.byteLength(text) / 2)
    // The model calls read_tool_output on the artifact its preview names, in the middle of it.
    model.respond((request) => {
      if (request.messages.some((m) => m.role === 'tool')) return { text: 'read it' }
      const user = request.messages.find((m) => m.role === 'user')
      const id = /kept whole as artifact (out_[0-9a-f]{32})/.exec(String(user?.content))?.[1]
      const args = JSON.stringify({ artifact_id: id, offset: middle, length: 4000 })
      return { toolCalls: [{ name: 'read_tool_output', arguments: args }] }
    })
    const turn = await service.stepTurn('t1', session_id, { input: text })
    expect(turn.status).toBe('completed')
    const [first, second] = model.requests
    const user = first?.messages.find((m) => m.role === 'user')
    const id = /kept whole as artifact (out_[0-9a-f]{32})/.exec(String(user?.content))?.[1] ?? ''
    expect(id).not.toBe('')
    expect(JSON.stringify(first?.messages).length).toBeLessThan(30_000)
    // no runner and no tools here: the tool is offered because the transcript names the input
    expect(first?.tools.map((t) => t.name)).toContain('read_tool_output')
    const read = String(second?.messages.find((m) => m.role === 'tool')?.content)
    const wanted = Buffer.from(text)
      .subarray(middle + 4, middle + 3990)
      .toString('utf8')
    expect(read).toContain(`[${id}: bytes ${middle}–${middle + 4000} of`)
    expect(read).toContain(wanted.slice(4, -4))

    // The record: the preview as the input, and the artifact named.
    const page = await service.listTurns('t1', session_id, { limit: 10 })
    const entry = page.turns[0]?.input
    expect(entry?.input).toBe(user?.content)
    expect(entry?.input_artifacts).toEqual([
      { artifact_id: id, size: Buffer.byteLength(text), lines: 20_000 },
    ])
    const view = await service.getSession('t1', session_id)
    expect(view.title).toMatch(/^line 0 é€😀 x+ line 1 é€😀 x+ line 2 .*…$/u)
  })

  it('an exec prompt over the limit is kept the same way; the model reads the preview', async () => {
    const { service, model } = fixture.engine
    const text = longText(5000)
    model.enqueue({ text: 'done' })
    const run = await service.exec('t1', { prompt: text })
    expect(run.events.at(-1)?.type).toBe('thread.completed')
    const user = String(model.requests[0]?.messages.find((m) => m.role === 'user')?.content)
    expect(user).toContain(`[input of ${Buffer.byteLength(text).toLocaleString('en-US')} bytes`)
    expect(Buffer.byteLength(user)).toBeLessThan(LIMIT)
  })
})
