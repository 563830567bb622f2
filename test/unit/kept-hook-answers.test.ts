import { readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { parseBatch, serializeBatch } from '../../src/contract/batch.ts'
import { readableHookAnswers } from '../../src/contract/kept-hook-answers.ts'
import { readKeptOutputs } from '../../src/core/tools/read-kept-outputs.ts'
import { OutputArtifacts } from '../../src/store/output-artifacts.ts'
import { SessionKeys } from '../../src/store/session-ref.ts'

/**
 * `hook_answers` of a batch (read-only fixtures, test/fixtures/store/hook-answers): the hook
 * answers it kept whole, versioned on their own; `GET …/artifacts` lists them as hook answers.
 */
const ID = 'out_46dcdf9eadfa52bfc53f91167da46269'
const CHUNK = '69ca4ffe56ac04b576ed5c4569dd45e7c1fc5c13dba4df4fd3049a40d1044463'
const read = (path: string) =>
  new Uint8Array(readFileSync(new URL(`../fixtures/store/${path}`, import.meta.url)))
const text = (path: string) => new TextDecoder().decode(read(path))
const BATCHES = ['batch-0.json', 'batch-1.json', 'batch-2-newer.json']
/** The answer batch 0 kept: a blocking pre_tool_use hook's deny, which its reason names too. */
const DENIER = {
  event: 'pre_tool_use',
  hook: 'policy',
  hook_index: 0,
  hook_type: 'http',
  tool_call_id: 'call_1',
  artifact_id: ID,
  size: 1147,
  lines: 40,
}

describe('hook answers a batch kept (read-only fixtures)', () => {
  it('are read from version 1; a newer version reads as none; an older batch has none', () => {
    const [first, second, newer] = BATCHES.map((name) => parseBatch(text(`hook-answers/${name}`)))
    expect(readableHookAnswers(first?.hook_answers)).toEqual([DENIER])
    expect(readableHookAnswers(second?.hook_answers).map((a) => a.event)).toEqual(['stop'])
    expect(newer?.hook_answers?.version).toBe(2)
    expect(readableHookAnswers(newer?.hook_answers)).toEqual([])
    expect(parseBatch(text('turn-input/batch.json')).hook_answers).toBeUndefined()
  })

  it('are written back as they were read', () => {
    for (const name of BATCHES) {
      const batch = parseBatch(text(`hook-answers/${name}`))
      expect(parseBatch(serializeBatch(batch)).hook_answers).toEqual(batch.hook_answers)
    }
  })

  it('are listed as hook answers; a deny names its kept answer once, as the hook answer', async () => {
    const store = new MemoryObjectStore()
    const keys = new SessionKeys('', { tenant: 't1', workspace: 'ws', sessionId: 'sess-hooks' })
    await store.put(`${keys.root}outputs/${ID}.json`, read(`outputs/${ID}.json`))
    await store.put(`${keys.root}outputs/chunks/${CHUNK}`, read(`outputs/chunks/${CHUNK}`))
    for (const [n, name] of BATCHES.entries()) {
      // Stored as a writer stores version 6: gzip-compressed (batch-encoding.ts).
      await store.put(keys.batch(n), new Uint8Array(gzipSync(read(`hook-answers/${name}`))))
    }
    const outputs = new OutputArtifacts(store, keys.root)
    const listed = await readKeptOutputs(store, keys, outputs, 2, { limit: 50 })
    expect(listed.outputs).toEqual([
      { kind: 'hook_answer', seq: 3, turn_id: 'turn-1', ...DENIER },
      {
        kind: 'hook_answer',
        seq: 5,
        turn_id: 'turn-1',
        event: 'stop',
        hook: 'stop#1',
        hook_index: 1,
        hook_type: 'command',
        artifact_id: ID,
        size: 1147,
        lines: 40,
      },
    ])
    expect(listed.resume).toBe('2')
  })
})
