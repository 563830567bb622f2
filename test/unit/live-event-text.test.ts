import { describe, expect, it } from 'vitest'
import { bareLine, eventFrame, sequencedLine } from '../../functions/http/event-framing.ts'
import {
  parseVersionedLine,
  serializeEvent,
  serializeVersionedLine,
} from '../../src/contract/serialize.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { EventDispatcher } from '../../src/core/engine/event-dispatcher.ts'

const message: ThreadEvent = {
  type: 'item.completed',
  item: { id: 'i1', type: 'agent_message', text: 'Done.\nLine two' },
}

describe('live event text', () => {
  it('hands live listeners the canonical line serialized at dispatch', () => {
    const heard: [ThreadEvent, number, string | undefined][] = []
    const dispatcher = new EventDispatcher(7, (event, seq, line) => heard.push([event, seq, line]))
    dispatcher.emit(message)
    expect(heard).toEqual([[message, 7, serializeVersionedLine(message)]])
  })

  it('frames the event text spliced from the line, the same bytes as serializing it', () => {
    const line = serializeVersionedLine(message)
    expect(eventFrame(3, message, line)).toBe(eventFrame(3, message))
    expect(bareLine(message, line)).toBe(`${serializeEvent(message)}\n`)
    // The text comes from the line (a line standing for other text shows it is not re-serialized).
    const other: ThreadEvent = { ...message, item: { ...message.item, id: 'i2' } }
    expect(bareLine(message, serializeVersionedLine(other))).toBe(`${serializeEvent(other)}\n`)
    // A line not in the canonical form falls back to serializing the event.
    expect(bareLine(message, '{"event":{}}')).toBe(`${serializeEvent(message)}\n`)
  })

  it('splices the events feed lines from the text read back from events.jsonl', () => {
    const text = serializeVersionedLine(message)
    const line = parseVersionedLine(text)
    expect(sequencedLine(5, line, text)).toBe(sequencedLine(5, line))
    expect(JSON.parse(sequencedLine(5, line, text))).toEqual({ seq: 5, ...JSON.parse(text) })
    const other: ThreadEvent = { ...message, item: { ...message.item, id: 'i2' } }
    expect(sequencedLine(5, line, serializeVersionedLine(other))).toBe(
      sequencedLine(5, parseVersionedLine(serializeVersionedLine(other))),
    )
  })
})
