import * as z from 'zod'
import { IDEMPOTENCY_KEY } from './api.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * The client event of the Open Responses WebSocket mode (specification 2026-04-24,
 * `WebSocketResponseCreateEvent`): `{"type": "response.create", …}` with the fields of a
 * `POST /v1/responses` body beside `type` (validated by ResponsesRequestSchema once the event's
 * own fields are taken off). The HTTP transport's `stream`, `stream_options` and `background`
 * must not be sent: every response on a socket streams, and runs while the client waits.
 * `idempotency_key` is Turnline's: the WebSocket counterpart of the `Idempotency-Key` header.
 * `generate: false` is OpenAI's WebSocket-mode warm-up (in the specification's drafts, dropped
 * from its 2026-04-24 text): the response is answered at once, with no output and no turn run,
 * and the next `response.create` continuing it starts with what it carried.
 */
const httpOnly = (field: string, why: string) =>
  z.never({ error: `${field} is a field of the HTTP transport; WebSocket mode ${why}` }).optional()

export const ResponseCreateEnvelopeSchema = lazySchema(() =>
  z.looseObject({
    type: z.literal('response.create', {
      error: 'a client event is {"type": "response.create", …the fields of a response request}',
    }),
    idempotency_key: z
      .string()
      .regex(IDEMPOTENCY_KEY, {
        error: 'idempotency_key must be 1–200 characters from A-Z a-z 0-9 . _ : -',
      })
      .optional()
      .describe(
        'The Idempotency-Key of this response: the same key is the same response, run once.',
      ),
    generate: z
      .boolean()
      .optional()
      .describe(
        'false: a warm-up response (no output, nothing sent to the model) to continue from.',
      ),
    stream: httpOnly('stream', 'streams every response'),
    stream_options: httpOnly('stream_options', 'streams every response'),
    background: httpOnly('background', 'runs each response while the connection waits'),
  }),
)

/** The fields of the envelope that are not the request's. */
export const ENVELOPE_FIELDS = ['type', 'idempotency_key', 'generate'] as const
