import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { MemoryTenantLimiter } from '../../adapters/memory/memory-tenant-limiter.ts'
import { tenantAdmission } from '../../functions/tenancy/tenant-admission.ts'
import { OUTPUT_CHUNK_BYTES } from '../../src/contract/output-artifact.ts'
import type { OutputKeeping } from '../../src/core/tools/kept-output.ts'
import { captureOutput } from '../../src/core/tools/output-capture.ts'
import { tenantOutputQuota } from '../../src/core/tools/session-outputs.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { OutputArtifacts } from '../../src/store/output-artifacts.ts'

const INLINE = 64 * 1024

/** `bytes` of text as a stream of 64 KB pieces, with no length known in advance. */
function streamed(bytes: number): Response {
  const piece = new TextEncoder().encode('0123456789abcdef'.repeat(4096))
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= bytes) return controller.close()
      const part = piece.subarray(0, Math.min(piece.length, bytes - sent))
      sent += part.length
      controller.enqueue(part)
    },
  })
  return new Response(body)
}

/** A session's keeping on the memory store, with the tenant's daily quota when `limit` is set. */
function keeping(options: { maxBytes: number; limit?: number }) {
  const limiter = new MemoryTenantLimiter()
  const admission = tenantAdmission({
    limiter,
    defaults: options.limit === undefined ? {} : { outputBytesPerDay: options.limit },
    slotTtlMs: 60_000,
    reservationTtlMs: 60_000,
    defaultOutputTokens: 1000,
    clock: systemClock,
  })
  const quota = tenantOutputQuota(admission, 't1')
  let takes = 0
  const kept: OutputKeeping = {
    artifacts: new OutputArtifacts(new MemoryObjectStore(), 't1/w/.vtcode/sessions/s/'),
    maxBytes: options.maxBytes,
    quota: {
      take: (bytes) => {
        takes += 1
        return quota.take(bytes)
      },
      give: quota.give,
    },
  }
  return {
    kept,
    takes: () => takes,
    used: async () => (await limiter.usageToday('t1')).outputBytes,
  }
}

describe('kept output within its caps', () => {
  it('an answer found over the cap on one output mid-way leaves nothing stored', async () => {
    const { kept, used } = keeping({ maxBytes: 2 << 20 })
    const captured = await captureOutput(streamed(3 << 20), INLINE, kept)
    expect(captured.kind).toBe('too_large')
    expect(captured.text).toContain('TURNLINE_TOOL_MAX_OUTPUT_BYTES); it was not kept]')
    expect(await kept.artifacts.storedBytes()).toBe(0)
    expect(await used()).toBe(0)
  })

  it("counts an output's bytes in the tenant's usage, asking in steps of a chunk", async () => {
    const size = 5 * OUTPUT_CHUNK_BYTES + 12345
    const { kept, takes, used } = keeping({ maxBytes: 64 << 20 })
    const captured = await captureOutput(streamed(size), INLINE, kept)
    if (captured.kind !== 'artifact') throw new Error(captured.text)
    expect(captured.artifact.size).toBe(size)
    expect(await used()).toBe(size)
    // 80 reads of 64 KB, but one question per chunk (and the first for the whole first chunk)
    expect(takes()).toBeLessThanOrEqual(7)
  })

  it('outputs of known size racing for the last of the quota are kept or refused whole', async () => {
    const { kept, used } = keeping({ maxBytes: 64 << 20, limit: 5 << 20 })
    const answer = 'z'.repeat(2 << 20)
    const captured = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        captureOutput(new Response(`${i}${answer}`), INLINE, kept, answer.length + 1),
      ),
    )
    expect(captured.filter((c) => c.kind === 'artifact')).toHaveLength(2)
    expect(await used()).toBe(2 * (answer.length + 1))
  })

  it("an output the tenant's daily quota refuses mid-way keeps nothing and gives back what it took", async () => {
    const { kept, used } = keeping({ maxBytes: 64 << 20, limit: (2 << 20) + 950 * 1024 })
    const first = await captureOutput(streamed(2 << 20), INLINE, kept)
    expect(first.kind).toBe('artifact')
    const before = await kept.artifacts.storedBytes()
    const second = await captureOutput(streamed(2 << 20), INLINE, kept)
    expect(second.kind).toBe('too_large')
    expect(second.text).toContain('bytes of tool output tenant t1 may keep per day')
    expect(second.text).toContain('output_bytes_per_day')
    expect(await kept.artifacts.storedBytes()).toBe(before)
    expect(await used()).toBe(2 << 20)
    // what is left still keeps an output that fits, though less than a chunk's step is left
    const third = await captureOutput(streamed(900 * 1024), INLINE, kept)
    expect(third.kind).toBe('artifact')
    expect(await used()).toBe((2 << 20) + 900 * 1024)
  })
})
