import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { BATCH_VERSION, parseBatch, serializeBatch } from '../../src/contract/batch.ts'
import {
  CHECKPOINT_VERSION,
  parseCheckpoint,
  serializeCheckpoint,
} from '../../src/contract/checkpoint.ts'

/**
 * The transcript format: version 3 (the order of an answer's blocks, test/fixtures/store/v3/)
 * beside the read-only version 2 fixtures (assistant reasoning and answer parts, v2/) and
 * version 1 fixtures (log/, state/), which stay readable, each with its own message schema.
 */
const text = (path: string) =>
  readFileSync(new URL(`../fixtures/store/${path}`, import.meta.url), 'utf8')

describe('transcript format version 3', () => {
  it('is what batches and checkpoints are written with', () => {
    // Batch version 4 keeps version 3's messages and stores each text once (store-content-refs);
    // 5 stores version 4's document compressed, 6 its state as what changed
    // (store-batch-compression).
    expect(BATCH_VERSION).toBe(7)
    expect(CHECKPOINT_VERSION).toBe(4) // 4: may name its transcript instead (store-checkpoint-history)
  })

  it('reads a batch whose answers keep the order of their blocks, byte for byte', () => {
    const source = text('v3/batch-order.json')
    const batch = parseBatch(source)
    expect(batch.version).toBe(3)
    const [, claude, , , responses] = batch.history?.append ?? []
    expect(claude).toMatchObject({
      role: 'assistant',
      order: ['reasoning', 'text', 'reasoning', 'tool_call', 'tool_call'],
    })
    expect(responses).toMatchObject({
      order: ['reasoning', 'text', 'reasoning', 'tool_call', 'text'],
    })
    expect(serializeBatch(batch)).toBe(source)
  })

  it('reads a version 3 checkpoint byte for byte', () => {
    const source = text('v3/checkpoint-order.json')
    const checkpoint = parseCheckpoint(source)
    expect(checkpoint.history?.[2]).toMatchObject({ order: expect.any(Array) })
    expect(serializeCheckpoint(checkpoint)).toBe(source)
  })

  it('reads version 2 documents with the version 2 message schema', () => {
    // Version 2 never had an order: a field by that name in a v2 document is not read as one.
    const doc = JSON.parse(text('v2/batch-reasoning.json'))
    doc.history.append[3].order = ['text', 'reasoning']
    expect(parseBatch(JSON.stringify(doc)).history?.append[3]).not.toHaveProperty('order')
    const checkpoint = JSON.parse(text('v2/checkpoint-reasoning.json'))
    checkpoint.history[2].order = ['text', 'reasoning']
    expect(parseCheckpoint(JSON.stringify(checkpoint)).history?.[2]).not.toHaveProperty('order')
  })

  it('refuses an order naming an unknown kind of block', () => {
    const doc = JSON.parse(text('v3/batch-order.json'))
    doc.history.append[1].order = ['reasoning', 'image']
    expect(() => parseBatch(JSON.stringify(doc))).toThrow(
      expect.objectContaining({ code: 'corrupt_data' }),
    )
  })

  it('reads a batch whose assistant messages carry reasoning and parts, byte for byte', () => {
    const source = text('v2/batch-reasoning.json')
    const batch = parseBatch(source)
    expect(batch.version).toBe(2)
    const [, toolCall, , answer] = batch.history?.append ?? []
    expect(toolCall).toMatchObject({
      role: 'assistant',
      reasoning: [{ type: 'text', field: 'reasoning_content' }],
    })
    expect(answer).toMatchObject({
      role: 'assistant',
      content: 'Reading it now.\n\nIt says: buy milk.',
      reasoning: [
        { type: 'openai_reasoning', id: 'rs_68a1', encrypted_content: 'gAAAAABo-opaque' },
        { type: 'anthropic_thinking', signature: 'EqQBCgIYAhIM-signature' },
        { type: 'anthropic_redacted_thinking', data: 'EmwKAhgBEgy-redacted' },
      ],
      parts: [{ phase: 'commentary' }, { phase: 'final_answer' }],
    })
    expect(serializeBatch(batch)).toBe(source)
  })

  it('reads a version 2 checkpoint byte for byte', () => {
    const source = text('v2/checkpoint-reasoning.json')
    const checkpoint = parseCheckpoint(source)
    expect(checkpoint.history?.[2]).toMatchObject({ reasoning: [{ type: 'text' }] })
    expect(serializeCheckpoint(checkpoint)).toBe(source)
  })

  it('reads version 1 documents with the version 1 message schema', () => {
    const batch = parseBatch(text('log/0000000001.json'))
    expect(batch.version).toBe(1)
    expect(batch.history?.append.some((m) => m.role === 'assistant' && m.tool_calls)).toBe(true)
    // Version 1 never had reasoning: a field by that name in a v1 document is not read as one.
    const doc = JSON.parse(text('log/0000000001.json'))
    doc.history.append[2].reasoning = [{ type: 'text', text: 'x' }]
    expect(parseBatch(JSON.stringify(doc)).history?.append[2]).not.toHaveProperty('reasoning')
    const checkpoint = JSON.parse(text('state/0000000001.json'))
    checkpoint.history[2].reasoning = [{ type: 'text', text: 'x' }]
    expect(parseCheckpoint(JSON.stringify(checkpoint)).history?.[2]).not.toHaveProperty('reasoning')
  })

  it('refuses a reasoning block of an unknown type or without its opaque payload', () => {
    const doc = JSON.parse(text('v2/batch-reasoning.json'))
    doc.history.append[3].reasoning = [{ type: 'gemini_thought', text: 'x' }]
    expect(() => parseBatch(JSON.stringify(doc))).toThrow(
      expect.objectContaining({ code: 'corrupt_data' }),
    )
    doc.history.append[3].reasoning = [{ type: 'anthropic_redacted_thinking', data: '' }]
    expect(() => parseBatch(JSON.stringify(doc))).toThrow(
      expect.objectContaining({ code: 'corrupt_data' }),
    )
  })
})
