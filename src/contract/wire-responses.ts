import * as z from 'zod'
import * as api from './api-responses.ts'
import { DeliveryListSchema as DocumentedDeliveryList } from './callback-delivery.ts'
import { KeptOutputListSchema as DocumentedKeptOutputList } from './kept-output-list.ts'
import { parseEventValue } from './serialize.ts'
import type { ParsedThreadEvent } from './thread-event.ts'
import { tolerant } from './tolerant-schema.ts'

/**
 * Response bodies of the HTTP API (v1) as a client reads them off the wire, derived from the
 * documented schemas (`api-responses.ts`, the one place a response shape is written): the typed
 * client (`client/`) validates every answer with these, and
 * `test/unit/wire-response-types.test.ts` checks at compile time that they describe what the
 * server's types promise. Where the document is strict they are tolerant, so an older client
 * reads a newer server's answers:
 * - every object, however deep, drops fields it does not know (`tolerant`), the session config
 *   included (it is strict as a request body);
 * - events of types this version does not know pass through opaque (`type: 'unknown'`);
 * - error codes are any string, and the feed's `schema_version` any string.
 */

/** A ThreadEvent on the wire: a known event validated by its schema, or an opaque unknown one. */
export const WireThreadEventSchema = z.unknown().transform((value, ctx): ParsedThreadEvent => {
  try {
    return parseEventValue(value)
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message })
    return z.NEVER
  }
})

/** Every error: `{"error":{"code","message","details?"}}` (codes in `errors.ts`, or newer). */
export const ErrorBodySchema = tolerant(
  api.ErrorBodySchema.extend({
    error: api.ErrorBodySchema.shape.error.extend({ code: z.string() }),
  }),
)

export const TurnStatusSchema = z.enum(api.TURN_STATUSES)

/** `POST …/turns`, `/complete`, `/cancel`, `/compact`, `/permissions`, `/plan-approval`. */
export const TurnResponseSchema = tolerant(
  api.TurnResponseSchema.extend({ events: z.array(WireThreadEventSchema) }),
)

export const CreateSessionResponseSchema = tolerant(api.CreateSessionResponseSchema)
export const ForkResponseSchema = tolerant(api.ForkResponseSchema)
export const SessionSummarySchema = tolerant(api.SessionSummarySchema)
export const SessionListSchema = tolerant(api.SessionListSchema)
export const WorkspaceListSchema = tolerant(api.WorkspaceListSchema)
export const TurnListSchema = tolerant(api.TurnListSchema)
/** `GET /v1/sessions/:id/artifacts`: the tool outputs a session kept whole, by call. */
export const KeptOutputListSchema = tolerant(DocumentedKeptOutputList)
export const BudgetReportSchema = tolerant(api.BudgetReportSchema)
/** `GET /v1/sessions/:id`: its `config` drops settings a newer server added. */
export const SessionViewSchema = tolerant(api.SessionViewSchema)
export const IntentResponseSchema = tolerant(api.IntentResponseSchema)
/** `GET /v1/sessions/:id/deliveries`: the completion-callback notices and their attempts. */
export const DeliveryListSchema = tolerant(DocumentedDeliveryList)

/** One line of the NDJSON events feed: the `events.jsonl` line with its seq in front. */
export const EventFeedLineSchema = tolerant(
  api.SequencedEventSchema.extend({ schema_version: z.string(), event: WireThreadEventSchema }),
)

/** `POST /v1/webhooks/:name`: the automation run of one delivery. */
export const AutomationRunResponseSchema = tolerant(
  api.WebhookRunResponseSchema.extend({ turn: TurnResponseSchema }),
)

/** `GET /healthz`. */
export const HealthResponseSchema = tolerant(api.HealthSchema)

/** `POST /v1/responses`, `GET /v1/responses/:id`: the Open Responses resource (kept as sent). */
export const OpenResponseSchema = tolerant(api.ResponseResourceSchema)

/** One streamed Open Responses event (`event: <type>`, `data: {type, sequence_number, …}`). */
export const OpenResponsesEventSchema = z.looseObject({
  type: z.string(),
  sequence_number: z.number().int().min(0),
})

// The agent-layer routes (docs/agent-layer.md).

/** `GET /v1/workspaces/:workspace/artifacts`. */
export const ArtifactListSchema = tolerant(api.ArtifactListSchema)
/** Where an artifact is and whether it exists. */
export const ArtifactEntrySchema = ArtifactListSchema.shape.artifacts.element
/** One artifact (`GET`, `PUT`, `POST` of `…/artifacts/:kind`); `etag` goes back as If-Match. */
export const ArtifactViewSchema = tolerant(api.ArtifactViewSchema)
/** `GET /v1/sessions/:id/orientation`. */
export const OrientationViewSchema = tolerant(api.OrientationViewSchema)

/** `POST /v1/sessions/:id/handoff`. */
export const HandoffResponseSchema = tolerant(
  api.HandoffResponseSchema.extend({ source_completion: TurnResponseSchema.optional() }),
)

/** `POST /v1/sessions/:id/verify`: the proposer's committed events and the verdict. */
export const VerifyResponseSchema = tolerant(
  api.VerifyResponseSchema.extend({ events: z.array(WireThreadEventSchema) }),
)
export const VerificationResultSchema = VerifyResponseSchema.shape.verification

/** `POST /v1/loops`, `GET /v1/loops/:id`: the stored state and its budget report. */
export const LoopViewSchema = tolerant(api.LoopViewSchema)
/** `POST /v1/loops/:id/step`. */
export const LoopStepResponseSchema = tolerant(api.LoopStepResponseSchema)
