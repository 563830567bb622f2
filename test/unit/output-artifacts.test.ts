import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { byteRange } from '../../functions/http/byte-range.ts'
import { type ErrorCode, isTurnlineError } from '../../src/contract/errors.ts'
import { OUTPUT_CHUNK_BYTES } from '../../src/contract/output-artifact.ts'
import { captureOutput } from '../../src/core/tools/output-capture.ts'
import { textOfSlice } from '../../src/core/tools/output-preview.ts'
import { readOutputToolHandler } from '../../src/core/tools/read-output-tool.ts'
import type { ToolRunContext } from '../../src/core/tools/tool-handler.ts'
import { OutputArtifacts, parseOutputArtifact } from '../../src/store/output-artifacts.ts'

const FIXTURE_ID = 'out_46dcdf9eadfa52bfc53f91167da46269'
const FIXTURE_CHUNK = '69ca4ffe56ac04b576ed5c4569dd45e7c1fc5c13dba4df4fd3049a40d1044463'
const fixture = (path: string) =>
  new Uint8Array(readFileSync(new URL(`../fixtures/store/outputs/${path}`, import.meta.url)))
const encode = (text: string) => new TextEncoder().encode(text)
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

async function collect(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Uint8Array[] = []
  for await (const chunk of chunks) parts.push(chunk)
  return decode(Buffer.concat(parts))
}

async function failsWith(code: ErrorCode, run: () => Promise<unknown>): Promise<void> {
  const error = await run().then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(isTurnlineError(error, code), String(error)).toBe(true)
}

/** ~2.6 MB of numbered lines: three chunks, lines crossing both chunk boundaries. */
const big = Array.from({ length: 40_000 }, (_, i) => `line ${i + 1} ${'x'.repeat(i % 97)}`).join(
  '\n',
)

async function stored(text: string, pieces = 7919) {
  const outputs = new OutputArtifacts(new MemoryObjectStore(), 't/w/.vtcode/sessions/s/')
  const writer = outputs.writer()
  const bytes = encode(text)
  for (let at = 0; at < bytes.byteLength; at += pieces) {
    await writer.write(bytes.subarray(at, at + pieces))
  }
  return { outputs, artifact: await writer.finish() }
}

describe('output artifacts (stored format v1, v2)', () => {
  it('the fixture reads back, and the same bytes written again get the same id and descriptor', async () => {
    const store = new MemoryObjectStore()
    await store.put(`s/outputs/${FIXTURE_ID}.json`, fixture(`${FIXTURE_ID}.json`))
    await store.put(`s/outputs/chunks/${FIXTURE_CHUNK}`, fixture(`chunks/${FIXTURE_CHUNK}`))
    const outputs = new OutputArtifacts(store, 's/')
    const opened = await outputs.open(FIXTURE_ID)
    expect(opened.artifact).toMatchObject({ version: 1, size: 1147, lines: 40 })
    const text = await collect(opened.read(0, opened.artifact.size))
    expect(text).toBe(decode(fixture(`chunks/${FIXTURE_CHUNK}`)))

    const again = new OutputArtifacts(new MemoryObjectStore(), 'x/')
    const writer = again.writer()
    await writer.write(encode(text))
    const artifact = await writer.finish()
    expect(artifact.id).toBe(FIXTURE_ID)
    // Written as version 2 (the same fields; where it is stored says who reads it).
    const v2 = new URL(`../fixtures/store/outputs-v2/${FIXTURE_ID}.json`, import.meta.url)
    expect(JSON.stringify(artifact)).toBe(decode(new Uint8Array(readFileSync(v2))))
    expect(JSON.stringify({ ...artifact, version: 1 })).toBe(decode(fixture(`${FIXTURE_ID}.json`)))
  })

  it('a newer version is unsupported_version; a damaged descriptor corrupt_data; none not_found', async () => {
    const stored = JSON.parse(decode(fixture(`${FIXTURE_ID}.json`)))
    const json = (value: unknown) => encode(JSON.stringify(value))
    await failsWith('unsupported_version', async () =>
      parseOutputArtifact(json({ ...stored, version: 3 }), FIXTURE_ID),
    )
    await failsWith('corrupt_data', async () =>
      parseOutputArtifact(json({ ...stored, size: -1 }), FIXTURE_ID),
    )
    await failsWith('corrupt_data', async () => parseOutputArtifact(encode('{'), FIXTURE_ID))
    await failsWith('corrupt_data', async () =>
      parseOutputArtifact(json({ ...stored, id: `out_${'1'.repeat(32)}` }), FIXTURE_ID),
    )
    const outputs = new OutputArtifacts(new MemoryObjectStore(), 's/')
    await failsWith('not_found', () => outputs.open(FIXTURE_ID))
    await failsWith('not_found', () => outputs.open('../manifest'))
  })

  it('streams in chunks of 1 MiB and reads any range across them', async () => {
    const { outputs, artifact } = await stored(big)
    expect(artifact.size).toBe(big.length)
    expect(artifact.lines).toBe(40_000)
    expect(artifact.chunks.map((c) => c.size)).toEqual([
      OUTPUT_CHUNK_BYTES,
      OUTPUT_CHUNK_BYTES,
      big.length - 2 * OUTPUT_CHUNK_BYTES,
    ])
    const across = [OUTPUT_CHUNK_BYTES - 5, 2 * OUTPUT_CHUNK_BYTES + 5] as const
    expect(await collect(outputs.read(artifact, ...across))).toBe(big.slice(...across))
    expect(await collect(outputs.read(artifact))).toBe(big)
    // The id depends on the bytes only, not on how they arrived.
    expect((await stored(big, 65_536)).artifact.id).toBe(artifact.id)
    expect((await stored(`${big}!`)).artifact.id).not.toBe(artifact.id)
  })
})

describe('captureOutput', () => {
  const outputs = () => new OutputArtifacts(new MemoryObjectStore(), 's/')

  it('keeps an answer within the limit inline, byte for byte', async () => {
    const text = 'é'.repeat(500)
    const captured = await captureOutput(new Response(text), 1024, {
      artifacts: outputs(),
      maxBytes: 1 << 20,
    })
    expect(captured).toEqual({ kind: 'inline', text })
  })

  it('keeps a longer answer whole and previews its head and tail with the id and sizes', async () => {
    const artifacts = outputs()
    const captured = await captureOutput(new Response(big), 64 * 1024, {
      artifacts,
      maxBytes: 8 << 20,
    })
    if (captured.kind !== 'artifact') throw new Error(captured.kind)
    expect(captured.text.length).toBeLessThan(24 * 1024)
    expect(captured.text.startsWith(big.slice(0, 16 * 1024))).toBe(true)
    expect(captured.text.endsWith(big.slice(-4096))).toBe(true)
    expect(captured.text).toContain(`kept whole as artifact ${captured.artifact.id}`)
    expect(captured.text).toContain(`${big.length.toLocaleString('en-US')} bytes (40,000 lines)`)
    expect(await collect(artifacts.read(captured.artifact))).toBe(big)
  })

  it('refuses an answer over the cap, and cuts as before without a store', async () => {
    const refused = await captureOutput(new Response(big), 64 * 1024, {
      artifacts: outputs(),
      maxBytes: 1 << 20,
    })
    expect(refused.kind).toBe('too_large')
    expect(refused.text).toContain('TURNLINE_TOOL_MAX_OUTPUT_BYTES')
    const cut = await captureOutput(new Response(big), 1024)
    expect(cut.text).toBe(`${big.slice(0, 1024)}\n[response cut at 1024 bytes]`)
  })

  it("refuses an answer that would pass the session's total, and says which cap", async () => {
    const keeping = { artifacts: outputs(), maxBytes: 8 << 20, maxSessionBytes: 4 << 20 }
    const first = await captureOutput(new Response(big), 64 * 1024, keeping)
    expect(first.kind).toBe('artifact')
    const second = await captureOutput(new Response(`${big}!`), 64 * 1024, keeping)
    expect(second.kind).toBe('too_large')
    expect(second.text).toContain('(TURNLINE_TOOL_MAX_SESSION_OUTPUT_BYTES); it was not kept]')
    expect(await keeping.artifacts.storedBytes()).toBeLessThan(big.length + 1024)
  })

  it('never splits a character at the preview edges', () => {
    const bytes = encode('aé✓b')
    expect(textOfSlice(bytes.subarray(0, 4), { after: true })).toBe('aé')
    expect(textOfSlice(bytes.subarray(2), { before: true })).toBe('✓b')
  })
})

describe('read_tool_output', () => {
  const ctx = {} as ToolRunContext
  const run = async (outputs: OutputArtifacts, args: Record<string, unknown>) => {
    const result = await readOutputToolHandler(outputs).run(args, ctx)
    if (result.kind !== 'done') throw new Error('pending')
    return result
  }

  it('is read-only (offered in plan mode)', () => {
    expect(readOutputToolHandler(new OutputArtifacts(new MemoryObjectStore(), 's/')).readOnly).toBe(
      true,
    )
  })

  it('pages by bytes, by lines and by search across chunks', async () => {
    const { outputs, artifact } = await stored(big)
    const id = artifact.id
    const bytes = await run(outputs, {
      artifact_id: id,
      offset: OUTPUT_CHUNK_BYTES - 10,
      length: 20,
    })
    expect(bytes.output).toBe(
      `[${id}: bytes ${OUTPUT_CHUNK_BYTES - 10}–${OUTPUT_CHUNK_BYTES + 10} of ${big.length}]\n` +
        big.slice(OUTPUT_CHUNK_BYTES - 10, OUTPUT_CHUNK_BYTES + 10),
    )
    const all = big.split('\n')
    const lines = await run(outputs, { artifact_id: id, start_line: 39_999, line_count: 10 })
    expect(lines.output).toBe(`[${id}: lines 39999–40000 of 40000]\n${all[39_998]}\n${all[39_999]}`)
    // The line that crosses the first chunk boundary comes whole.
    const crossing = big.slice(0, OUTPUT_CHUNK_BYTES).split('\n').length
    const boundary = await run(outputs, { artifact_id: id, start_line: crossing, line_count: 1 })
    expect(boundary.output.split('\n')[1]).toBe(all[crossing - 1])
    const found = await run(outputs, { artifact_id: id, search: 'LINE 3999 ', ignore_case: true })
    expect(found.output).toBe(
      `[${id}: 1 matching line of 40000]\nline 3999 (byte ${big.indexOf('line 3999 ')}): ${all[3998]}`,
    )
    const many = await run(outputs, { artifact_id: id, search: 'line 1', max_matches: 3 })
    expect(many.output.split('\n')[0]).toContain('3 matching lines (the first 3; more follow)')
  })

  it('searches by a regular expression in linear time, whatever the pattern', async () => {
    const text = `${'a'.repeat(200_000)}!\nerror 404 at /x\nERROR 500 at /y\n`
    const { outputs, artifact } = await stored(text)
    const id = artifact.id
    const codes = await run(outputs, {
      artifact_id: id,
      regex: 'error (\\d{3})',
      ignore_case: true,
    })
    expect(codes.output.split('\n')).toEqual([
      `[${id}: 2 matching lines of 3]`,
      `line 2 (byte 200002): error 404 at /x`,
      `line 3 (byte 200018): ERROR 500 at /y`,
    ])
    // JavaScript's engine would backtrack for ages here; this one answers at once
    const none = await run(outputs, { artifact_id: id, regex: '(a+)+b$' })
    expect(none.output).toBe(`[${id}: 0 matching lines of 3]\n`)
    const refused = await run(outputs, { artifact_id: id, regex: '(a)\\1' })
    expect(refused).toMatchObject({ ok: false })
    expect(refused.output).toContain('back-references are not supported')
  })

  it('gives up on a pattern that costs too much a character, before it holds the process', async () => {
    // Linear, but ~2,000 steps at every position: 8 s of the event loop for a 64 KiB line.
    const text = `${'a'.repeat(64 * 1024)}\n${'ab\n'.repeat(20_000)}x\n`
    const { outputs, artifact } = await stored(text)
    for (const regex of ['.{0,1000}x', '(?:a|b){0,1000}x']) {
      const refused = await run(outputs, { artifact_id: artifact.id, regex })
      expect(refused, regex).toMatchObject({ ok: false })
      expect(refused.output).toMatch(/^regex: the pattern needs more than 32 steps a character/)
    }
    const found = await run(outputs, { artifact_id: artifact.id, regex: '^(?:a|b){0,10}x' })
    expect(found.output.split('\n')[0]).toBe(`[${artifact.id}: 1 matching line of 20002]`)
  })

  it('answers the model clearly for an unknown id or bad arguments', async () => {
    const outputs = new OutputArtifacts(new MemoryObjectStore(), 's/')
    const unknown = await run(outputs, { artifact_id: FIXTURE_ID })
    expect(unknown).toMatchObject({
      ok: false,
      output: `no output artifact ${FIXTURE_ID} in this session`,
    })
    const bad = await run(outputs, { artifact_id: 'manifest.json' })
    expect(bad.ok).toBe(false)
    expect(bad.output).toContain('artifact_id')
  })
})

describe('byteRange', () => {
  it('reads one range and ignores what it does not understand', () => {
    expect(byteRange(undefined, 100)).toEqual({ kind: 'whole' })
    expect(byteRange('bytes=0-9', 100)).toEqual({ kind: 'range', start: 0, end: 10 })
    expect(byteRange('bytes=90-', 100)).toEqual({ kind: 'range', start: 90, end: 100 })
    expect(byteRange('bytes=90-500', 100)).toEqual({ kind: 'range', start: 90, end: 100 })
    expect(byteRange('bytes=-10', 100)).toEqual({ kind: 'range', start: 90, end: 100 })
    expect(byteRange('bytes=-500', 100)).toEqual({ kind: 'range', start: 0, end: 100 })
    expect(byteRange('bytes=100-', 100)).toEqual({ kind: 'unsatisfiable' })
    expect(byteRange('bytes=-0', 100)).toEqual({ kind: 'unsatisfiable' })
    expect(byteRange('bytes=0-1,5-6', 100)).toEqual({ kind: 'whole' })
    expect(byteRange('items=0-1', 100)).toEqual({ kind: 'whole' })
    expect(byteRange('bytes=9-1', 100)).toEqual({ kind: 'whole' })
  })
})
