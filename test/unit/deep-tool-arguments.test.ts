import { describe, expect, it } from 'vitest'
import { PARSED_JSON_MAX_DEPTH } from '../../src/contract/exact-json.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { echoTool } from '../support/engine-deps.ts'
import { useScriptedEngine } from '../support/scripted-engine.ts'

/**
 * A model can nest its tool-call arguments as deep as its output allows: a few hundred bytes of
 * brackets. The turn once failed with a RangeError (HTTP 500) where a recursive walk met them —
 * the tool schema's validator with a recursive schema at 200 levels, zod's parse of the item
 * holding the parsed value at a few thousand — and a value stored just under that could not be
 * read back on a deeper stack. Past PARSED_JSON_MAX_DEPTH levels the item keeps the arguments'
 * text and the call fails with a reason the model reads.
 */
const fixture = useScriptedEngine()

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`

/** A tool whose `q` is a string or a list of such, to any depth (a recursive schema). */
const treeTool = (url: string) => ({
  ...echoTool(url),
  parameters: {
    type: 'object',
    properties: { q: { $ref: '#/$defs/node' } },
    required: ['q'],
    $defs: {
      node: { anyOf: [{ type: 'string' }, { type: 'array', items: { $ref: '#/$defs/node' } }] },
    },
  },
})

function invocation(events: ThreadEvent[]) {
  const done = events.find((e) => e.type === 'item.completed' && e.item.type === 'tool_invocation')
  return done?.type === 'item.completed' ? done.item : undefined
}

function toolOutput(events: ThreadEvent[]) {
  const done = events.find((e) => e.type === 'item.completed' && e.item.type === 'tool_output')
  return done?.type === 'item.completed' && done.item.type === 'tool_output'
    ? done.item.output
    : undefined
}

describe('deeply nested tool arguments', () => {
  it('a recursive schema: past the bound the call fails with a reason, within it the tool runs', async () => {
    const { service, model, receiver } = fixture.engine
    const { session_id } = await service.createSession('t1', { tools: [treeTool(receiver.url)] })
    const deep = `{"q":${nested(300)}}`
    model.enqueue({ toolCalls: [{ id: 'c1', name: 'lookup', arguments: deep }] }, { text: 'told' })
    const turn = await service.stepTurn('t1', session_id, { input: 'go' })
    expect(turn.status).toBe('completed')
    expect(invocation(turn.events)).toMatchObject({ arguments: deep, status: 'failed' })
    expect(toolOutput(turn.events)).toBe(
      `arguments are nested deeper than ${PARSED_JSON_MAX_DEPTH} levels`,
    )
    expect(receiver.calls).toHaveLength(0)

    const fine = `{"q":${nested(PARSED_JSON_MAX_DEPTH - 2)}}`
    model.enqueue({ toolCalls: [{ id: 'c2', name: 'lookup', arguments: fine }] }, { text: 'ran' })
    const next = await service.stepTurn('t1', session_id, { input: 'again' })
    expect(next.status).toBe('completed')
    expect(invocation(next.events)).toMatchObject({ arguments: JSON.parse(fine) })
    expect(receiver.calls).toHaveLength(1)
  })

  it('thousands of levels: the item keeps the text, the turn completes and reads back', async () => {
    const { service, model, receiver } = fixture.engine
    const { session_id } = await service.createSession('t1', { tools: [echoTool(receiver.url)] })
    for (const depth of [1_500, 3_000, 6_000]) {
      const raw = `{"q":"x","z":${nested(depth)}}`
      model.enqueue(
        { toolCalls: [{ id: `c${depth}`, name: 'lookup', arguments: raw }] },
        {
          text: 'ok',
        },
      )
      const turn = await service.stepTurn('t1', session_id, { input: `depth ${depth}` })
      expect(turn.status, `depth ${depth}`).toBe('completed')
      expect(invocation(turn.events)).toMatchObject({ arguments: raw, status: 'failed' })
    }
    const page = await service.readEvents('t1', session_id, -1, 1000)
    expect(page.complete).toBe(true)
    expect(page.events.filter((e) => e.line.event.type === 'turn.completed')).toHaveLength(3)
  })
})
