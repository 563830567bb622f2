import type OpenAI from 'openai'
import type { ResponseCompactParams } from 'openai/resources/responses/responses'
import * as z from 'zod'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import { lazySchema } from '../../src/contract/lazy-schema.ts'
import type { ModelCompactionRequest, ModelCompactionResult } from '../../src/ports/model-client.ts'
import { ProviderStreamError } from './model-failure.ts'
import { toResponsesInput } from './responses-request.ts'
import { normalizeResponsesUsage } from './responses-stream.ts'

/**
 * `POST /responses/compact`: the transcript goes in as Responses input items; the answer is the
 * compacted window — the user messages, then one opaque `compaction` item — mapped back onto
 * history messages. Items the transcript cannot hold (reasoning and the like) are left out.
 */

const TextPart = lazySchema(() => z.looseObject({ type: z.string(), text: z.string().optional() }))

const OutputItem = lazySchema(() =>
  z.discriminatedUnion('type', [
    z.looseObject({
      type: z.literal('message'),
      role: z.string(),
      content: z.union([z.string(), z.array(TextPart)]),
    }),
    z.looseObject({
      type: z.literal('compaction'),
      encrypted_content: z.string().min(1),
      id: z.string().min(1).nullish(),
    }),
    z.looseObject({
      type: z.literal('function_call'),
      call_id: z.string().min(1),
      name: z.string().min(1),
      arguments: z.string(),
    }),
    z.looseObject({
      type: z.literal('function_call_output'),
      call_id: z.string().min(1),
      output: z.union([z.string(), z.array(TextPart)]),
    }),
  ]),
)
type OutputItem = z.infer<typeof OutputItem>

function textOf(content: string | z.infer<typeof TextPart>[]): string {
  return typeof content === 'string' ? content : content.map((part) => part.text ?? '').join('')
}

function toHistory(item: OutputItem, into: HistoryMessage[]): void {
  switch (item.type) {
    case 'message': {
      const content = textOf(item.content)
      if (item.role === 'user') into.push({ role: 'user', content })
      else if (item.role === 'assistant') into.push({ role: 'assistant', content })
      else into.push({ role: 'system', content })
      return
    }
    case 'compaction':
      into.push({
        role: 'compaction',
        provider: 'openai',
        content: '',
        encrypted_content: item.encrypted_content,
        ...(item.id ? { id: item.id } : {}),
      })
      return
    case 'function_call': {
      const call = { id: item.call_id, name: item.name, arguments: item.arguments }
      const last = into.at(-1)
      // Consecutive calls belong to one assistant turn, as the stream adapter assembles them.
      if (last?.role === 'assistant' && last.tool_calls?.length) last.tool_calls.push(call)
      else into.push({ role: 'assistant', content: '', tool_calls: [call] })
      return
    }
    case 'function_call_output':
      into.push({ role: 'tool', tool_call_id: item.call_id, content: textOf(item.output) })
      return
  }
}

/** The compacted window as history messages; unknown item types are skipped. */
export function compactedHistory(output: readonly unknown[]): HistoryMessage[] {
  const messages: HistoryMessage[] = []
  for (const raw of output) {
    const type = (raw as { type?: unknown } | null)?.type
    const known = ['message', 'compaction', 'function_call', 'function_call_output']
    if (typeof type !== 'string' || !known.includes(type)) continue
    const parsed = OutputItem.safeParse(raw)
    if (!parsed.success) {
      throw new ProviderStreamError(
        `malformed ${type} item in the compaction response: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
        'malformed_compaction',
        'server',
      )
    }
    toHistory(parsed.data, messages)
  }
  return messages
}

export function compactRequestBody(request: ModelCompactionRequest): ResponseCompactParams {
  return {
    model: request.model,
    input: request.messages.flatMap(toResponsesInput),
    ...(request.instructions ? { instructions: request.instructions } : {}),
  }
}

/** One compaction call; the caller owns retries and abort checks. */
export async function compactResponses(
  client: OpenAI,
  request: ModelCompactionRequest,
): Promise<ModelCompactionResult> {
  const response = await client.responses.compact(
    compactRequestBody(request),
    request.signal ? { signal: request.signal } : {},
  )
  if (!Array.isArray(response.output)) {
    throw new ProviderStreamError(
      'the compaction response has no output',
      'malformed_compaction',
      'server',
    )
  }
  return {
    messages: compactedHistory(response.output),
    usage: normalizeResponsesUsage(response.usage),
  }
}
