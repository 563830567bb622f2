import { readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { legacyHookAnswers } from '../../src/core/tools/legacy-hook-answers.ts'
import { readOutputToolHandler } from '../../src/core/tools/read-output-tool.ts'
import type { ToolRunContext } from '../../src/core/tools/tool-handler.ts'
import { OutputArtifacts } from '../../src/store/output-artifacts.ts'
import { SessionKeys } from '../../src/store/session-ref.ts'

/**
 * Which output artifacts the model's `read_tool_output` serves (read-only fixtures in
 * test/fixtures/store: outputs/ version 1, outputs-v2/ version 2, hook-answers/ batches): what
 * was named to the model, never a hook's answer kept hidden — refused with the words of an id the
 * session does not have — while the operators read every one.
 */
const ID = 'out_46dcdf9eadfa52bfc53f91167da46269'
const CHUNK = '69ca4ffe56ac04b576ed5c4569dd45e7c1fc5c13dba4df4fd3049a40d1044463'
const UNKNOWN = `out_${'0'.repeat(32)}`
const fixture = (path: string) =>
  new Uint8Array(readFileSync(new URL(`../fixtures/store/${path}`, import.meta.url)))
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
const context = {} as ToolRunContext

/** A session holding the fixture's chunk, its descriptors at `descriptors` (key → fixture). */
async function session(descriptors: Record<string, string>, batches: string[] = []) {
  const store = new MemoryObjectStore()
  const keys = new SessionKeys('', { tenant: 't1', workspace: 'ws', sessionId: 'sess-view' })
  await store.put(`${keys.root}outputs/chunks/${CHUNK}`, fixture(`outputs/chunks/${CHUNK}`))
  for (const [key, path] of Object.entries(descriptors)) {
    await store.put(`${keys.root}outputs/${key}`, fixture(path))
  }
  for (const [n, path] of batches.entries()) {
    const body = fixture(path)
    await store.put(keys.batch(n), path.startsWith('log/') ? body : new Uint8Array(gzipSync(body)))
  }
  const outputs = new OutputArtifacts(store, keys.root)
  const legacy = legacyHookAnswers(store, keys, () => batches.length - 1)
  const tool = readOutputToolHandler(outputs, legacy)
  const read = async (id: string) => {
    const result = await tool.run({ artifact_id: id, length: 100 }, context)
    return result.kind === 'done' ? result : { kind: result.kind, ok: false, output: '' }
  }
  return { store, keys, outputs, read }
}

/** The model's answer for an id the session does not have, with `id` in it. */
const notFound = (id: string) => ({
  kind: 'done',
  ok: false,
  output: `no output artifact ${id} in this session`,
})

describe('descriptors of version 2: where one is says who reads it', () => {
  it('a hidden descriptor is read by the operators, refused to the model as an unknown id', async () => {
    const { outputs, read } = await session({
      [`hidden/${ID}.json`]: `outputs-v2/hidden/${ID}.json`,
    })
    const opened = await outputs.open(ID)
    expect(opened.artifact).toMatchObject({ version: 2, size: 1147, lines: 40 })
    expect(await outputs.describeForModel(ID)).toBeNull()
    expect(await read(ID)).toEqual(notFound(ID))
    expect(await read(UNKNOWN)).toEqual(notFound(UNKNOWN))
  })

  it('one named to the model is read by both; naming a hidden one (a deny) writes it there', async () => {
    const named = await session({ [`${ID}.json`]: `outputs-v2/${ID}.json` })
    expect((await named.read(ID)).output).toContain(`[${ID}: bytes 0–100 of 1147]`)

    const denied = await session({ [`hidden/${ID}.json`]: `outputs-v2/hidden/${ID}.json` })
    expect(await denied.outputs.showToModel(ID)).toBe(true)
    expect((await denied.read(ID)).output).toContain(`[${ID}: bytes 0–100 of 1147]`)
    const written = await denied.store.get(`${denied.keys.root}outputs/${ID}.json`)
    expect(decode(written?.body ?? new Uint8Array())).toBe(decode(fixture(`outputs-v2/${ID}.json`)))
    expect(await denied.outputs.showToModel(UNKNOWN)).toBe(false)
  })

  it('a writer writes version 2: named where the model reads, hidden() apart', async () => {
    const text = fixture(`outputs/chunks/${CHUNK}`)
    for (const hidden of [false, true]) {
      const { store, keys, outputs } = await session({})
      const writer = (hidden ? outputs.hidden() : outputs).writer()
      await writer.write(text)
      expect((await writer.finish()).id).toBe(ID)
      const key = `${keys.root}outputs/${hidden ? 'hidden/' : ''}${ID}.json`
      expect(decode((await store.get(key))?.body ?? new Uint8Array())).toBe(
        decode(fixture(`outputs-v2/${hidden ? 'hidden/' : ''}${ID}.json`)),
      )
      expect(await outputs.describeForModel(ID)).toEqual(hidden ? null : expect.anything())
      expect(await outputs.describe(ID)).toMatchObject({ id: ID, version: 2 })
    }
  })
})

describe('descriptors of version 1, kept before hidden ones existed', () => {
  const legacy = { [`${ID}.json`]: `outputs/${ID}.json` }

  it("a hook's answer the batches record is refused to the model, though a tool's output quoted its id", async () => {
    const { outputs, read } = await session(legacy, ['hook-answers/hidden-batch-0.json'])
    expect(await read(ID)).toEqual(notFound(ID))
    expect((await outputs.open(ID)).artifact.version).toBe(1)
  })

  it("a deny's answer, which its rejection named to the model, is served", async () => {
    const batches = ['hook-answers/batch-0.json', 'hook-answers/batch-1.json']
    const { read } = await session(legacy, batches)
    expect((await read(ID)).output).toContain(`[${ID}: bytes 0–100 of 1147]`)
  })

  it('an output no batch records as a hook answer is served as before', async () => {
    const { read } = await session(legacy, ['log/0000000000.json'])
    expect((await read(ID)).output).toContain(`[${ID}: bytes 0–100 of 1147]`)
  })
})
