import type { AssistantMessage } from '../../contract/history-message.ts'
import type { ModelResponse } from '../../ports/model-client.ts'

/**
 * The transcript message of one model answer: its text and tool calls, and what the adapter needs
 * to send the answer back as the provider gave it — the reasoning blocks (reasoning text, Anthropic
 * thinking signatures, OpenAI Responses encrypted reasoning), the answer's message items, and the
 * order of its blocks when reasoning came between them.
 */
export function assistantMessage(response: ModelResponse): AssistantMessage {
  return {
    role: 'assistant',
    content: response.text,
    ...(response.toolCalls.length ? { tool_calls: response.toolCalls } : {}),
    ...(response.reasoningBlocks?.length ? { reasoning: response.reasoningBlocks } : {}),
    ...(response.parts?.length ? { parts: response.parts } : {}),
    ...(response.order ? { order: response.order } : {}),
  }
}
