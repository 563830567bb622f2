import { TurnlineError } from '../../src/contract/errors.ts'
import type { InputItem } from '../../src/contract/open-responses-input.ts'
import type { ResponsesRequest } from '../../src/contract/open-responses-request.ts'
import { toResponseRun } from '../../src/contract/open-responses-run.ts'
import type { SessionApi } from '../../src/core/session-api.ts'

/** A warm-up response the connection keeps: its id and the request it carried. */
export interface WarmupResponse {
  id: string
  warmup: ResponsesRequest
}

/**
 * `generate: false` (OpenAI's WebSocket-mode warm-up): the request is validated as any other,
 * and answered at once with a response that has an id and no output (`response.created`,
 * `response.in_progress`, `response.completed`, usage null); no session is created, nothing is
 * sent to the model and no turn runs. The connection keeps the request in memory under that id,
 * as it keeps a `store: false` response, whatever `store` says: the next `response.create`
 * naming it continues from what it carried (afterWarmup). Not with `previous_response_id` nor
 * `idempotency_key` (400): a warm-up starts a chain and runs nothing to replay.
 */
export function warmupResponse(
  request: ResponsesRequest,
  idempotencyKey: string | undefined,
  options: { api: SessionApi; extensions: boolean; send: (event: object) => void },
): WarmupResponse {
  for (const [field, set] of [
    ['previous_response_id', request.previous_response_id != null],
    ['idempotency_key', idempotencyKey !== undefined],
  ] as const) {
    if (set) {
      throw new TurnlineError(
        'invalid_input',
        `generate: false starts a chain and runs nothing: not with ${field}`,
        { details: { field: `body.${field}` } },
      )
    }
  }
  const run = toResponseRun(request, Math.floor(Date.now() / 1000))
  const view = options.api.openResponsesView(run.config, { extensions: options.extensions })
  const started = view.events({ type: 'thread.started', thread_id: crypto.randomUUID() })
  for (const { event } of [...started, ...view.awaitClientEvents()]) options.send(event)
  const id = (view.response as { id?: string } | undefined)?.id
  if (id === undefined) throw new Error('a warm-up response has no id')
  return { id, warmup: request }
}

/**
 * The request a continuation of a warm-up runs: the warm-up's fields it does not set itself
 * (instructions, tools, model, …), and the warm-up's input, then its own, as the conversation.
 * It keeps its `previous_response_id` (echoed), which names nothing stored.
 */
export function afterWarmup(warmup: ResponsesRequest, request: ResponsesRequest): ResponsesRequest {
  const own = Object.fromEntries(Object.entries(request).filter(([, value]) => value !== undefined))
  return { ...warmup, ...own, input: [...itemsOf(warmup.input), ...itemsOf(request.input)] }
}

const itemsOf = (input: ResponsesRequest['input']): InputItem[] =>
  typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input
