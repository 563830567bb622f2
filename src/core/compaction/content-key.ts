import type { HistoryMessage } from '../../contract/history-message.ts'

/**
 * A key for equal message content: role, length and two independent 32-bit FNV-1a hashes over
 * every field the count depends on. A collision only skews an estimate.
 */
export function contentKey(message: HistoryMessage): string {
  const state = { a: 0x811c9dc5, b: 0x01000193 ^ 0x5bd1e995, length: 0 }
  feed(state, message.content)
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      feed(state, '\u0000')
      feed(state, call.name)
      feed(state, '\u0001')
      feed(state, call.arguments)
    }
    for (const block of message.reasoning ?? []) {
      feed(state, '\u0003')
      if (block.type === 'text') feed(state, block.text)
      else if (block.type === 'anthropic_thinking') feed(state, block.thinking)
    }
  } else if (message.role === 'tool') {
    feed(state, '\u0002')
    feed(state, message.tool_call_id)
  } else if (message.role === 'user') {
    // Images count as a fixed number of tokens each: how many there are is part of the key.
    for (let i = 0; i < (message.images?.length ?? 0); i++) feed(state, '\u0004')
  }
  return `${message.role}:${state.length}:${(state.a >>> 0).toString(36)}:${(state.b >>> 0).toString(36)}`
}

function feed(state: { a: number; b: number; length: number }, text: string): void {
  let { a, b } = state
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x0100019b) ^ (b >>> 15)
  }
  state.a = a
  state.b = b
  state.length += text.length
}

/** The texts of a message the count depends on, in order. */
export function messageTexts(message: HistoryMessage): string[] {
  if (message.role === 'assistant') {
    const texts = [message.content]
    for (const call of message.tool_calls ?? []) texts.push(call.name, call.arguments)
    // Reasoning that goes back to the provider is part of the prompt too.
    for (const block of message.reasoning ?? []) {
      if (block.type === 'text') texts.push(block.text)
      else if (block.type === 'anthropic_thinking') texts.push(block.thinking)
    }
    return texts
  }
  if (message.role === 'tool') return [message.content, message.tool_call_id]
  return [message.content]
}
