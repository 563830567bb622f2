import { normalise } from './conformance-normalise.ts'
import type { MockRequest, MockStep } from './mock-openai.ts'

/**
 * The model of the cross-runtime conformance run: every answer is computed from the request
 * alone, so two runtimes that send the same requests get the same answers, and a runtime that
 * sends a different request gets a different answer (and the transcripts differ).
 *
 * A user message may carry a directive, `[[tool NAME ARGS]]` (ARGS verbatim, malformed JSON
 * included: several directives make several calls in one answer); the model then calls those
 * tools. After tool results, or without a directive, it answers in text naming how many
 * messages it saw and the start of the last one. Usage is estimated from the length of the
 * request as the run compares it (ids and timestamps normalised), so it is the same for requests
 * the run counts as the same: a compaction archive made in the same second as another is named
 * with a `-2`, which the comparison normalises but which would change a length estimated from the
 * raw request.
 */
export function conformanceAnswer(request: MockRequest): MockStep {
  const step = answerOf(request)
  const output =
    (step.text ?? '') + (step.toolCalls ?? []).map((t) => t.name + t.arguments).join('')
  const input = JSON.stringify(normalise(request.body))
  return { ...step, usage: { input_tokens: tokens(input), output_tokens: tokens(output) } }
}

const tokens = (text: string) => Math.ceil(text.length / 4)

function answerOf(request: MockRequest): MockStep {
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
