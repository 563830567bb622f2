import * as z from 'zod'
import { IDEMPOTENCY_KEY } from './api.ts'
import { ARTIFACT_KINDS } from './artifacts.ts'
import { lazySchema } from './lazy-schema.ts'
import { LOOP_ID } from './loop-state.ts'
import { OutputArtifactIdSchema } from './output-artifact.ts'

/**
 * Path parameters and request headers of the HTTP API: the routes validate them with these
 * schemas (functions/openapi/declared-input.ts) and the OpenAPI document shows them. Each
 * message is the whole error message the client gets (`details.field` names the value).
 */

const quoted = (input: unknown) => JSON.stringify(String(input ?? '').slice(0, 80))

/** The store's folder-segment rule (src/store/session-ref.ts), `..` excluded. */
const SEGMENT = /^(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/
const SEGMENT_RULE =
  'use 1–128 characters from A-Z a-z 0-9 . _ -, not starting with "." or "-", without ".."'

const segment = (what: string) =>
  z.string().regex(SEGMENT, {
    error: (issue) => `${what} ${quoted(issue.input)} is not valid: ${SEGMENT_RULE}`,
  })

export const SessionIdParamsSchema = lazySchema(() =>
  z.object({
    id: segment('session id')
      .describe('The session id (from `POST /v1/sessions`).')
      .meta({ example: 'sess_01JD3K8ZQ4' }),
  }),
)

/** `GET /v1/sessions/{id}/work/{work_id}`: a background turn (docs/http-api.md#background-turns). */
export const WorkParamsSchema = lazySchema(() =>
  SessionIdParamsSchema.extend({
    work_id: z
      .string()
      .regex(/^[0-9a-f]{32}$/, { error: 'work_id is 32 lowercase hex characters' })
      .describe('From the 202 answer of a background turn.'),
  }),
)

export const WorkspaceParamsSchema = lazySchema(() =>
  z.object({
    workspace: segment('workspace').describe('The workspace name.').meta({ example: 'default' }),
  }),
)

export const OutputArtifactParamsSchema = lazySchema(() =>
  z.object({
    id: SessionIdParamsSchema.shape.id,
    artifact_id: OutputArtifactIdSchema.meta({ example: 'out_0123456789abcdef0123456789abcdef' }),
  }),
)

export const RangeHeadersSchema = lazySchema(() =>
  z.object({
    Range: z
      .string()
      .optional()
      .describe(
        'One byte range (`bytes=0-1023`, `bytes=1024-`, `bytes=-4096`); answered 206 with Content-Range. Several ranges or another unit: the whole artifact.',
      ),
  }),
)

export const ArtifactParamsSchema = lazySchema(() =>
  z.object({
    workspace: WorkspaceParamsSchema.shape.workspace,
    kind: z
      .enum(ARTIFACT_KINDS, {
        error: (issue) =>
          `artifact kind ${quoted(issue.input)} is not valid: use one of ${ARTIFACT_KINDS.join(', ')}`,
      })
      .describe('The artifact kind.'),
  }),
)

export const LoopIdParamsSchema = lazySchema(() =>
  z.object({
    id: z
      .string()
      .regex(LOOP_ID, {
        error: (issue) =>
          `loop id ${quoted(issue.input)} is not valid: use 1–64 characters from A-Z a-z 0-9 _ -`,
      })
      .describe('The loop id (from `POST /v1/loops`).'),
  }),
)

/** `GET /v1/loops/{id}/work/{work_id}`: a loop's background step. */
export const LoopWorkParamsSchema = lazySchema(() =>
  LoopIdParamsSchema.extend({
    work_id: WorkParamsSchema.shape.work_id,
  }),
)

export const ResponseIdParamsSchema = lazySchema(() =>
  z.object({
    id: z
      .string()
      .regex(/^resp_(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/, {
        error: (issue) =>
          `response id ${quoted(issue.input)} is not valid: use resp_ followed by a session id (${SEGMENT_RULE})`,
      })
      .describe('`resp_<session id>`, as `POST /v1/responses` answered it.'),
  }),
)

export const WebhookParamsSchema = lazySchema(() =>
  z.object({
    name: z
      .string()
      .describe('The name of a webhook the deployment configures (TURNLINE_WEBHOOKS).'),
  }),
)

export const IdempotencyHeadersSchema = lazySchema(() =>
  z.object({
    'Idempotency-Key': z
      .string()
      .regex(IDEMPOTENCY_KEY, {
        error: 'Idempotency-Key must be 1–200 characters from A-Z a-z 0-9 . _ : -',
      })
      .optional()
      .describe(
        'Scoped to the session. A retry with the same key and body answers the first outcome; the key with another body is 422 `idempotency_key_reused`.',
      ),
  }),
)

export const LastEventIdHeadersSchema = lazySchema(() =>
  z.object({
    'Last-Event-ID': z
      .string()
      // not `^\s*(\d{1,15})?\s*$`: two adjacent `\s*` are quadratic in a run of spaces
      .regex(/^\s*(?:\d{1,15}\s*)?$/, {
        error: 'Last-Event-ID must be an event seq (a non-negative integer)',
      })
      .optional()
      .transform((value) =>
        value === undefined || value.trim() === '' ? undefined : Number(value),
      )
      .describe(
        'SSE resume (with `Accept: text/event-stream`): the last seq received; replaces `after`.',
      ),
  }),
)

export const IfMatchHeadersSchema = lazySchema(() =>
  z.object({
    'If-Match': z
      .string()
      .min(1, { error: 'If-Match must be the etag of a previous read' })
      .max(200, { error: 'If-Match must be the etag of a previous read' })
      .regex(/^(?!\*$)/, { error: 'If-Match must be the etag of a previous read' })
      .optional()
      .describe('The `etag` of a read: replace only that version (else 409 `conflict`).'),
  }),
)

/**
 * Standard Webhooks headers of a signed delivery (webhooks and the runner's callback). The
 * signature check (standard-webhooks.ts, runner-signature.ts) reads them; this documents them.
 */
export const SignedDeliveryHeadersSchema = lazySchema(() =>
  z.object({
    'webhook-id': z.string().describe('The message id; a redelivery keeps it.'),
    'webhook-timestamp': z
      .string()
      .regex(/^\d+$/)
      .describe('Unix seconds when it was signed; outside the tolerance window it is refused.'),
    'webhook-signature': z
      .string()
      .describe('Space-separated `v1,<base64 HMAC-SHA256>` of `id.timestamp.body`.'),
  }),
)

export const WebhookPayloadSchema = lazySchema(() =>
  z
    .unknown()
    .describe(
      'Any payload (usually JSON): verified byte for byte, then put into the prompt in place of `{{body}}`.',
    ),
)
