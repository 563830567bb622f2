import { TurnlineError } from './errors.ts'
import type { AssistantMessage, HistoryMessage } from './history-message.ts'
import { decodeCompaction } from './open-responses-compaction.ts'
import { documentOf } from './open-responses-files.ts'
import type { InputItem } from './open-responses-input.ts'
import type { UserFile } from './stored-file.ts'

/**
 * The transcript a response's session starts with, from the conversation its input carries:
 * user and assistant messages as they are, each function call on the assistant message before
 * it (a new one when none is open), each function output as the tool result of its call; a
 * compaction item is the compacted conversation it stands for, in place of everything before it.
 */
export function seededHistory(items: readonly InputItem[]): HistoryMessage[] {
  const history: HistoryMessage[] = []
  for (const item of items) {
    switch (item.type) {
      case 'message': {
        if (item.role === 'user') {
          history.push(userMessage(item.content))
        } else {
          history.push({ role: 'assistant', content: assistantText(item.content) })
        }
        break
      }
      case 'function_call': {
        const call = { id: item.call_id, name: item.name, arguments: item.arguments }
        const last = history.at(-1)
        if (last?.role === 'assistant') {
          last.tool_calls = [...(last.tool_calls ?? []), call]
        } else {
          history.push({ role: 'assistant', content: '', tool_calls: [call] })
        }
        break
      }
      case 'compaction':
        history.splice(0, history.length, ...decodeCompaction(item.encrypted_content, 'body.input'))
        break
      case 'function_call_output':
        history.push({
          role: 'tool',
          tool_call_id: item.call_id,
          content: outputText(item.output),
        })
        break
      default:
        break
    }
  }
  return history
}

type Content = Extract<InputItem, { type: 'message' }>['content']

function userMessage(content: Content): HistoryMessage {
  if (typeof content === 'string') return { role: 'user', content }
  const texts: string[] = []
  const images: { url: string; detail?: 'auto' | 'low' | 'high' }[] = []
  const files: UserFile[] = []
  for (const part of content) {
    if (part.type === 'input_text' || part.type === 'output_text') texts.push(part.text)
    if (part.type === 'input_image') {
      images.push({ url: part.image_url, ...(part.detail ? { detail: part.detail } : {}) })
    }
    if (part.type === 'input_file') files.push(documentOf(part))
  }
  const text = texts.filter((t) => t !== '').join('\n\n')
  return {
    role: 'user',
    content: text,
    ...(images.length > 0 ? { images } : {}),
    ...(files.length > 0 ? { files } : {}),
  }
}

function assistantText(content: Content): string {
  if (typeof content === 'string') return content
  return content
    .map((part) =>
      part.type === 'refusal'
        ? part.refusal
        : part.type === 'input_image' || part.type === 'input_file'
          ? ''
          : part.text,
    )
    .join('')
}

function outputText(output: Extract<InputItem, { type: 'function_call_output' }>['output']) {
  if (typeof output === 'string') return output
  return output.map((part) => (part.type === 'input_text' ? part.text : '')).join('')
}

/**
 * Checks a transcript before a turn runs on it: every tool result answers a call made before
 * it, and every call has its result (a call left unanswered cannot be sent to a model). The
 * first problem is an invalid_input naming the call.
 */
export function assertAnsweredCalls(history: readonly HistoryMessage[]): void {
  const open = new Map<string, string>()
  for (const message of history) {
    if (message.role === 'assistant') {
      for (const call of (message as AssistantMessage).tool_calls ?? [])
        open.set(call.id, call.name)
    } else if (message.role === 'tool') {
      if (!open.has(message.tool_call_id)) {
        throw new TurnlineError(
          'invalid_input',
          `function_call_output for call ${JSON.stringify(message.tool_call_id)} answers no function_call before it`,
          { details: { field: 'body.input' } },
        )
      }
      open.delete(message.tool_call_id)
    }
  }
  const [first] = open
  if (first) {
    throw new TurnlineError(
      'invalid_input',
      `function_call ${JSON.stringify(first[0])} (${first[1]}) has no function_call_output: send one with the same call_id`,
      { details: { field: 'body.input' } },
    )
  }
}
