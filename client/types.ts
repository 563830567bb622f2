import type * as z from 'zod'
import type { UsageReportSchema } from '../src/contract/tenancy.ts'
import type { ParsedThreadEvent } from '../src/contract/thread-event.ts'
import type {
  ArtifactEntrySchema,
  ArtifactListSchema,
  ArtifactViewSchema,
  AutomationRunResponseSchema,
  BudgetReportSchema,
  CreateSessionResponseSchema,
  DeliveryListSchema,
  ErrorBodySchema,
  ForkResponseSchema,
  HandoffResponseSchema,
  IntentResponseSchema,
  KeptOutputListSchema,
  LoopStepResponseSchema,
  LoopViewSchema,
  OpenResponseSchema,
  OpenResponsesEventSchema,
  OrientationViewSchema,
  SessionListSchema,
  SessionSummarySchema,
  SessionViewSchema,
  TurnListSchema,
  TurnResponseSchema,
  TurnStatusSchema,
  VerificationResultSchema,
  VerifyResponseSchema,
  WorkspaceListSchema,
} from '../src/contract/wire-responses.ts'

/**
 * The API's answers as the client returns them: `z.output` of the contract's schemas
 * (src/contract), the same schemas the server's types are checked against.
 */
export type TurnStatus = z.output<typeof TurnStatusSchema>
export type TurnResponse = z.output<typeof TurnResponseSchema>
export type CreatedSession = z.output<typeof CreateSessionResponseSchema>
export type ForkedSession = z.output<typeof ForkResponseSchema>
export type SessionSummary = z.output<typeof SessionSummarySchema>
export type SessionList = z.output<typeof SessionListSchema>
export type WorkspaceList = z.output<typeof WorkspaceListSchema>
/** `GET …/turns`: a page of a session's turns, each with what it was asked. */
export type TurnList = z.output<typeof TurnListSchema>
/** `GET …/artifacts`: a page of the tool outputs and hook answers a session kept whole. */
export type KeptOutputList = z.output<typeof KeptOutputListSchema>
/** One entry of `KeptOutputList`: a tool output (`kind: 'tool_output'`) or a hook answer. */
export type KeptOutputEntry = KeptOutputList['outputs'][number]
/** A hook answer kept whole, by the hook that gave it (`kind: 'hook_answer'`). */
export type KeptHookOutput = Extract<KeptOutputEntry, { kind: 'hook_answer' }>
/** `GET /v1/sessions/:id/deliveries` (docs/http-api.md#completion-callbacks). */
export type DeliveryList = z.output<typeof DeliveryListSchema>
export type SessionView = z.output<typeof SessionViewSchema>
export type BudgetReport = z.output<typeof BudgetReportSchema>
export type IntentAccepted = z.output<typeof IntentResponseSchema>
export type ErrorBody = z.output<typeof ErrorBodySchema>
export type AutomationRun = z.output<typeof AutomationRunResponseSchema>
export type ArtifactEntry = z.output<typeof ArtifactEntrySchema>
export type ArtifactList = z.output<typeof ArtifactListSchema>
export type ArtifactView = z.output<typeof ArtifactViewSchema>
export type OrientationView = z.output<typeof OrientationViewSchema>
export type HandoffResponse = z.output<typeof HandoffResponseSchema>
export type VerificationResult = z.output<typeof VerificationResultSchema>
export type VerifyResponse = z.output<typeof VerifyResponseSchema>
export type LoopView = z.output<typeof LoopViewSchema>
export type LoopStepResponse = z.output<typeof LoopStepResponseSchema>
export type OpenResponse = z.output<typeof OpenResponseSchema>
export type OpenResponsesEvent = z.output<typeof OpenResponsesEventSchema>
export type UsageReport = z.output<typeof UsageReportSchema>

/** One event of a session with its seq (the SSE `id`, the feed's `seq`). */
export interface SeqEvent {
  seq: number
  /** The SSE id: the seq as text, what `Last-Event-ID` resumes after. */
  id: string
  event: ParsedThreadEvent
}

/** A turn answer's events with their seqs (`next_seq - events.length …`). */
export function turnEvents(response: Pick<TurnResponse, 'events' | 'next_seq'>): SeqEvent[] {
  const first = response.next_seq - response.events.length
  return response.events.map((event, i) => ({ seq: first + i, id: String(first + i), event }))
}
