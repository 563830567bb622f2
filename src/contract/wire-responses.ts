import * as z from 'zod'
import {
  HandoffResponseSchema as DocumentedHandoffResponse,
  OrientationViewSchema as DocumentedOrientationView,
  VerifyResponseSchema as DocumentedVerifyResponse,
} from './agent-session-responses.ts'
import { BudgetReportSchema as DocumentedBudgetReport } from './budget-report.ts'
import { DeliveryListSchema as DocumentedDeliveryList } from './callback-delivery.ts'
import { ErrorBodySchema as DocumentedErrorBody } from './error-responses.ts'
import { KeptOutputListSchema as DocumentedKeptOutputList } from './kept-output-list.ts'
import { lazySchema } from './lazy-schema.ts'
import {
  LoopStepResponseSchema as DocumentedLoopStepResponse,
  LoopViewSchema as DocumentedLoopView,
} from './loop-responses.ts'
import {
  ArtifactListSchema as DocumentedArtifactList,
  ArtifactViewSchema as DocumentedArtifactView,
  HealthSchema as DocumentedHealth,
  ResponseResourceSchema as DocumentedResponseResource,
} from './resource-responses.ts'
import { parseEventValue } from './serialize.ts'
import {
  CreateSessionResponseSchema as DocumentedCreateSessionResponse,
  ForkResponseSchema as DocumentedForkResponse,
  IntentResponseSchema as DocumentedIntentResponse,
  SequencedEventSchema as DocumentedSequencedEvent,
  SessionListSchema as DocumentedSessionList,
  SessionSummarySchema as DocumentedSessionSummary,
  TurnListSchema as DocumentedTurnList,
  WorkspaceListSchema as DocumentedWorkspaceList,
} from './session-responses.ts'
import { SessionViewSchema as DocumentedSessionView } from './session-view-response.ts'
import type { ParsedThreadEvent } from './thread-event.ts'
import { tolerant } from './tolerant-schema.ts'
import {
  TurnResponseSchema as DocumentedTurnResponse,
  WebhookRunResponseSchema as DocumentedWebhookRunResponse,
  TURN_STATUSES,
} from './turn-responses.ts'

/**
 * Response bodies of the HTTP API (v1) as a client reads them off the wire, derived from the
 * documented schemas (`*-responses.ts`, the one place a response shape is written): the typed
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
export const WireThreadEventSchema = lazySchema(() =>
  z.unknown().transform((value, ctx): ParsedThreadEvent => {
    try {
      return parseEventValue(value)
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message })
      return z.NEVER
    }
  }),
)

/** Every error: `{"error":{"code","message","details?"}}` (codes in `errors.ts`, or newer). */
export const ErrorBodySchema = lazySchema(() =>
  tolerant(
    DocumentedErrorBody.extend({
      error: DocumentedErrorBody.shape.error.extend({ code: z.string() }),
    }),
  ),
)

export const TurnStatusSchema = lazySchema(() => z.enum(TURN_STATUSES))

/** `POST …/turns`, `/complete`, `/cancel`, `/compact`, `/permissions`, `/plan-approval`. */
export const TurnResponseSchema = lazySchema(() =>
  tolerant(DocumentedTurnResponse.extend({ events: z.array(WireThreadEventSchema) })),
)

export const CreateSessionResponseSchema = lazySchema(() =>
  tolerant(DocumentedCreateSessionResponse),
)
export const ForkResponseSchema = lazySchema(() => tolerant(DocumentedForkResponse))
export const SessionSummarySchema = lazySchema(() => tolerant(DocumentedSessionSummary))
export const SessionListSchema = lazySchema(() => tolerant(DocumentedSessionList))
export const WorkspaceListSchema = lazySchema(() => tolerant(DocumentedWorkspaceList))
export const TurnListSchema = lazySchema(() => tolerant(DocumentedTurnList))
/** `GET /v1/sessions/:id/artifacts`: the tool outputs a session kept whole, by call. */
export const KeptOutputListSchema = lazySchema(() => tolerant(DocumentedKeptOutputList))
export const BudgetReportSchema = lazySchema(() => tolerant(DocumentedBudgetReport))
/** `GET /v1/sessions/:id`: its `config` drops settings a newer server added. */
export const SessionViewSchema = lazySchema(() => tolerant(DocumentedSessionView))
export const IntentResponseSchema = lazySchema(() => tolerant(DocumentedIntentResponse))
/** `GET /v1/sessions/:id/deliveries`: the completion-callback notices and their attempts. */
export const DeliveryListSchema = lazySchema(() => tolerant(DocumentedDeliveryList))

/** One line of the NDJSON events feed: the `events.jsonl` line with its seq in front. */
export const EventFeedLineSchema = lazySchema(() =>
  tolerant(
    DocumentedSequencedEvent.extend({ schema_version: z.string(), event: WireThreadEventSchema }),
  ),
)

/** `POST /v1/webhooks/:name`: the automation run of one delivery. */
export const AutomationRunResponseSchema = lazySchema(() =>
  tolerant(DocumentedWebhookRunResponse.extend({ turn: TurnResponseSchema })),
)

/** `GET /healthz`. */
export const HealthResponseSchema = lazySchema(() => tolerant(DocumentedHealth))

/** `POST /v1/responses`, `GET /v1/responses/:id`: the Open Responses resource (kept as sent). */
export const OpenResponseSchema = lazySchema(() => tolerant(DocumentedResponseResource))

/** One streamed Open Responses event (`event: <type>`, `data: {type, sequence_number, …}`). */
export const OpenResponsesEventSchema = lazySchema(() =>
  z.looseObject({
    type: z.string(),
    sequence_number: z.number().int().min(0),
  }),
)

// The agent-layer routes (docs/agent-layer.md).

/** `GET /v1/workspaces/:workspace/artifacts`. */
export const ArtifactListSchema = lazySchema(() => tolerant(DocumentedArtifactList))
/** Where an artifact is and whether it exists. */
export const ArtifactEntrySchema = lazySchema(() => ArtifactListSchema.shape.artifacts.element)
/** One artifact (`GET`, `PUT`, `POST` of `…/artifacts/:kind`); `etag` goes back as If-Match. */
export const ArtifactViewSchema = lazySchema(() => tolerant(DocumentedArtifactView))
/** `GET /v1/sessions/:id/orientation`. */
export const OrientationViewSchema = lazySchema(() => tolerant(DocumentedOrientationView))

/** `POST /v1/sessions/:id/handoff`. */
export const HandoffResponseSchema = lazySchema(() =>
  tolerant(DocumentedHandoffResponse.extend({ source_completion: TurnResponseSchema.optional() })),
)

/** `POST /v1/sessions/:id/verify`: the proposer's committed events and the verdict. */
export const VerifyResponseSchema = lazySchema(() =>
  tolerant(DocumentedVerifyResponse.extend({ events: z.array(WireThreadEventSchema) })),
)
export const VerificationResultSchema = lazySchema(() => VerifyResponseSchema.shape.verification)

/** `POST /v1/loops`, `GET /v1/loops/:id`: the stored state and its budget report. */
export const LoopViewSchema = lazySchema(() => tolerant(DocumentedLoopView))
/** `POST /v1/loops/:id/step`. */
export const LoopStepResponseSchema = lazySchema(() => tolerant(DocumentedLoopStepResponse))
