import type { ReasoningBlock } from '../../src/contract/history-message.ts'

/** Where a Chat provider streamed a piece of reasoning (see ReasoningBlock `text`). */
export type ReasoningField = 'reasoning_content' | 'reasoning' | 'thinking'

/** What one streamed delta adds: reasoning pieces and answer text, in order. */
export interface DeltaPieces {
  reasoning: { text: string; field: ReasoningField }[]
  text: string
}

/**
 * Reads a Chat Completions delta: reasoning in `reasoning_content` (DeepSeek, Moonshot, Qwen,
 * vLLM, LM Studio) or `reasoning` (Ollama, OpenRouter, Groq, newer vLLM); `content` as a string,
 * or as a list of parts — Mistral streams `{type:"text",text}` and `{type:"thinking",thinking:[
 * {type:"text",text}]}` parts; a refusal counts as answer text.
 */
export function deltaPieces(delta: Record<string, unknown>): DeltaPieces {
  const reasoning: DeltaPieces['reasoning'] = []
  for (const field of ['reasoning_content', 'reasoning'] as const) {
    const value = delta[field]
    if (typeof value === 'string' && value !== '') {
      reasoning.push({ text: value, field })
      break
    }
  }
  let text = ''
  const content = delta.content
  if (typeof content === 'string') text += content
  else if (Array.isArray(content)) {
    for (const part of content) {
      if (typeof part === 'string') text += part
      else if (isRecord(part) && part.type === 'text' && typeof part.text === 'string') {
        text += part.text
      } else if (isRecord(part) && part.type === 'thinking') {
        const thought = thinkingText(part.thinking)
        if (thought !== '') reasoning.push({ text: thought, field: 'thinking' })
      }
    }
  }
  if (typeof delta.refusal === 'string') text += delta.refusal
  return { reasoning, text }
}

/** Mistral's `thinking` is a list of text chunks (a plain string is taken as well). */
function thinkingText(value: unknown): string {
  if (typeof value === 'string') return value
  if (!Array.isArray(value)) return ''
  let text = ''
  for (const chunk of value) {
    if (typeof chunk === 'string') text += chunk
    else if (isRecord(chunk) && typeof chunk.text === 'string') text += chunk.text
  }
  return text
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null
}

/** Reasoning blocks as streamed: consecutive text of one field is one block. */
export class ReasoningBlocks {
  readonly blocks: ReasoningBlock[] = []
  text = ''

  add(text: string, field: ReasoningField): void {
    this.text += text
    const last = this.blocks.at(-1)
    if (last?.type === 'text' && last.field === field) last.text += text
    else this.blocks.push({ type: 'text', text, field })
  }
}
