import {
  ANSWER_PART_SEPARATOR,
  type AnswerBlockKind,
  type AnswerPart,
  type AssistantMessage,
  type ReasoningBlock,
  type ToolCall,
} from './history-message.ts'

/** One block of an assistant message, in the order its provider gave them. */
export type AnswerBlock =
  | { kind: 'reasoning'; block: ReasoningBlock }
  | { kind: 'text'; part: AnswerPart }
  | { kind: 'tool_call'; call: ToolCall }

/** Usual order: reasoning, then text, then tool calls. */
const RANK: Readonly<Record<AnswerBlockKind, number>> = { reasoning: 0, text: 1, tool_call: 2 }

/**
 * The `order` to keep for an answer whose blocks came in the order `kinds` (one entry per
 * reasoning block, text and tool call): undefined when it is the usual order, which needs none.
 */
export function answerOrder(kinds: readonly AnswerBlockKind[]): AnswerBlockKind[] | undefined {
  const usual = kinds.every(
    (kind, i) => i === 0 || RANK[kinds[i - 1] as AnswerBlockKind] <= RANK[kind],
  )
  return usual ? undefined : [...kinds]
}

/** The texts of an answer: its parts when they still make up `content`, else `content` alone. */
function texts(message: AssistantMessage): AnswerPart[] {
  const parts = message.parts
  if (parts && parts.map((part) => part.text).join(ANSWER_PART_SEPARATOR) === message.content) {
    return parts
  }
  return message.content === '' ? [] : [{ text: message.content }]
}

/**
 * The blocks of an assistant message in the order the provider gave them (its `order`), or
 * reasoning, text, tool calls when it has none. Each adapter sends back the blocks its API
 * takes, in this order — Anthropic's thinking blocks between tool uses and Responses reasoning
 * items before the call they led to must go back where they were. Blocks `order` does not
 * account for (a message edited since) follow in the usual order.
 */
export function answerBlocks(message: AssistantMessage): AnswerBlock[] {
  const queues = {
    reasoning: (message.reasoning ?? []).map(
      (block): AnswerBlock => ({ kind: 'reasoning', block }),
    ),
    text: texts(message).map((part): AnswerBlock => ({ kind: 'text', part })),
    tool_call: (message.tool_calls ?? []).map((call): AnswerBlock => ({ kind: 'tool_call', call })),
  }
  const blocks: AnswerBlock[] = []
  for (const kind of message.order ?? []) {
    const next = queues[kind].shift()
    if (next) blocks.push(next)
  }
  return [...blocks, ...queues.reasoning, ...queues.text, ...queues.tool_call]
}
