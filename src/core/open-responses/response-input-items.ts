import { parseEngineState } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { ListedContent, ListedInputItem } from '../../contract/open-responses-input-items.ts'
import { responseRecordOf } from '../../contract/open-responses-record.ts'
import { fileDataUrl } from '../../contract/stored-file.ts'
import { splitTurnInput, type TurnInput } from '../../contract/turn-input.ts'
import { readBatches } from '../../store/rehydrate.ts'
import { SessionImages } from '../../store/session-images.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { readTurnInputs } from '../../store/turn-inputs.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'

/** An input item before it has its list id. */
type Unnumbered = ListedInputItem extends infer I
  ? I extends unknown
    ? Omit<I, 'id'>
    : never
  : never

const PREFIX: Record<ListedInputItem['type'], string> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  compaction: 'cmp',
}

/**
 * The input items of a stored response, in input order: the conversation its session was
 * seeded with (the previous response's whole conversation when it continued one, then the
 * items of its `input` before its last user messages: the first batch's transcript) and the
 * input of its one turn (those user messages). System and developer messages of the request
 * are its `instructions` and reasoning items are not kept, so neither is listed; images are
 * listed as `data:` URLs. 404 for a session that is not a response (store: false ones are
 * gone once they ended).
 */
export async function responseInputItems(
  deps: ServiceDeps,
  ref: SessionRef,
): Promise<ListedInputItem[]> {
  const snapshot = await deps.sessions.open(ref)
  if (!responseRecordOf(parseEngineState(snapshot.state).config)) {
    throw new TurnlineError('not_found', `no response resp_${ref.sessionId}`)
  }
  const { objects } = deps.sessions
  const keys = deps.sessions.keys(ref)
  const images = new SessionImages(objects, keys.root)
  const [first] = await readBatches(objects, keys, [0])
  const seeded = await images.loadMessages(first?.history?.append ?? [])
  const { turns } = await readTurnInputs(objects, keys, snapshot.lastBatch, { limit: 1 })
  const input = turns[0]?.input?.input
  const items = [...seeded.flatMap(historyItems), ...(input === undefined ? [] : [userItem(input)])]
  return items.map(
    (item, n) => ({ ...item, id: `${PREFIX[item.type]}_${n}_${ref.sessionId}` }) as ListedInputItem,
  )
}

function historyItems(message: HistoryMessage): Unnumbered[] {
  switch (message.role) {
    case 'system':
      return message.content === ''
        ? []
        : [message_('system', [{ type: 'input_text', text: message.content }])]
    case 'user':
      return [message_('user', userContent(message))]
    case 'assistant': {
      const text: Unnumbered[] =
        message.content === ''
          ? []
          : [
              message_('assistant', [
                { type: 'output_text', text: message.content, annotations: [], logprobs: [] },
              ]),
            ]
      const calls = (message.tool_calls ?? []).map(
        (call): Unnumbered => ({
          type: 'function_call',
          status: 'completed',
          call_id: call.id,
          name: call.name,
          arguments: call.arguments,
        }),
      )
      return [...text, ...calls]
    }
    case 'tool':
      return [
        {
          type: 'function_call_output',
          status: 'completed',
          call_id: message.tool_call_id,
          output: message.content,
        },
      ]
    case 'compaction':
      return [{ type: 'compaction', encrypted_content: message.encrypted_content }]
  }
}

/** A user message's content parts as an item lists them (stored images loaded already). */
export function userContent(message: Extract<HistoryMessage, { role: 'user' }>): ListedContent[] {
  const content: ListedContent[] = message.content
    ? [{ type: 'input_text', text: message.content }]
    : []
  for (const image of message.images ?? []) {
    if ('url' in image) {
      content.push({ type: 'input_image', image_url: image.url, detail: image.detail ?? 'auto' })
    }
  }
  for (const file of message.files ?? []) {
    if ('data' in file) {
      content.push({ type: 'input_file', filename: file.filename, file_data: fileDataUrl(file) })
    }
  }
  return content
}

function userItem(input: TurnInput): Unnumbered {
  const { text, images } = splitTurnInput(input)
  return historyItems({
    role: 'user',
    content: text,
    ...(images.length ? { images } : {}),
  })[0] as Unnumbered
}

function message_(role: 'user' | 'assistant' | 'system', content: ListedContent[]): Unnumbered {
  return { type: 'message', status: 'completed', role, content }
}
