import type { MockRequest, MockStep } from './mock-openai.ts'

/**
 * The model of the cross-runtime conformance run: every answer is computed from the request
 * alone, so two runtimes that send the same requests get the same answers, and a runtime that
 * sends a different request gets a different answer (and the transcripts differ).
 *
 * A user message may carry a directive, `[[tool NAME ARGS]]` (ARGS verbatim, malformed JSON
 * included: several directives make several calls in one answer); the model then calls those
 * tools. After tool results, or without a directive, it answers in text naming how many
 * messages it saw and the start of the last one. Usage is left to the mock (estimated from the
 * request's length), the same for the same request.
 */
export function conformanceAnswer(request: MockRequest): MockStep {
  const messages = (request.body.messages ?? []) as ChatMessage[]
  const last = messages.at(-1)
  const text = last === undefined ? '' : contentText(last)
  if (last?.role === 'user') {
    const calls = [...text.matchAll(/\[\[tool (\S+) (.*?)\]\]/g)].map((match, i) => ({
      id: `call_${messages.length}_${i}`,
      name: match[1] ?? '',
      arguments: match[2] ?? '',
    }))
    if (calls.length > 0) return { toolCalls: calls }
  }
  const seen = text.replace(/\s+/g, ' ').slice(0, 48)
  return { text: `Reply to ${messages.length} messages (last ${last?.role}): ${seen}` }
}

interface ChatMessage {
  role: string
  content?: string | { type: string; text?: string }[] | null
}

function contentText(message: ChatMessage): string {
  const { content } = message
  if (typeof content === 'string') return content
  return (content ?? []).map((part) => part.text ?? '').join('')
}
