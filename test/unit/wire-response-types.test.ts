import { describe, expect, expectTypeOf, it } from 'vitest'
import type * as z from 'zod'
import type {
  CreateSessionResponse,
  IntentResponse,
  ListedSession,
  SessionSummary,
  SessionView,
  TurnResponse,
  TurnStatus,
} from '../../src/contract/api.ts'
import type { ArtifactEntry, ArtifactView } from '../../src/contract/artifacts.ts'
import type { BudgetReport } from '../../src/contract/budget-status.ts'
import type { HandoffResponse } from '../../src/contract/handoff-request.ts'
import type { KeptOutputList } from '../../src/contract/kept-output-list.ts'
import type { LoopStepResponse, LoopView } from '../../src/contract/loop-state.ts'
import type { OrientationView } from '../../src/contract/orientation-view.ts'
import { serializeVersionedLine } from '../../src/contract/serialize.ts'
import type { VerificationResult } from '../../src/contract/verification.ts'
import {
  type ArtifactEntrySchema,
  type ArtifactViewSchema,
  type BudgetReportSchema,
  type CreateSessionResponseSchema,
  EventFeedLineSchema,
  type HandoffResponseSchema,
  type IntentResponseSchema,
  type KeptOutputListSchema,
  type LoopStepResponseSchema,
  type LoopViewSchema,
  OrientationViewSchema,
  type SessionSummarySchema,
  type SessionViewSchema,
  type TurnListSchema,
  TurnResponseSchema,
  type TurnStatusSchema,
  type VerificationResultSchema,
} from '../../src/contract/wire-responses.ts'
import type { TurnPage } from '../../src/store/turn-inputs.ts'

type Out<S extends z.ZodType> = z.output<S>
/** Each assignable to the other (deep equality chokes on the session config's unions). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

/**
 * The response schemas the client validates with (src/contract/wire-responses.ts, derived from
 * the documented *-responses.ts) against the types the server answers with: `tsc` fails this file
 * when one side changes without the other. A server answer must pass the schema (server type
 * assignable to the schema's input), and the client's type must be the server's.
 */
describe('API response schemas match the server types', () => {
  it('for sessions and turns', () => {
    expectTypeOf<Out<typeof TurnStatusSchema>>().toEqualTypeOf<TurnStatus>()
    expectTypeOf<Out<typeof CreateSessionResponseSchema>>().toEqualTypeOf<CreateSessionResponse>()
    // A listed session adds its last activity and state; the schema also reads a session view.
    expectTypeOf<ListedSession>().toExtend<Out<typeof SessionSummarySchema>>()
    expectTypeOf<SessionSummary>().toExtend<Out<typeof SessionSummarySchema>>()
    expectTypeOf<Out<typeof SessionSummarySchema>>().toExtend<SessionSummary>()
    expectTypeOf<Out<typeof SessionViewSchema>>().toEqualTypeOf<SessionView>()
    expectTypeOf<Out<typeof IntentResponseSchema>>().toEqualTypeOf<IntentResponse>()
    expectTypeOf<TurnPage>().toExtend<Out<typeof TurnListSchema>>()
    expectTypeOf<Out<typeof KeptOutputListSchema>>().toEqualTypeOf<KeptOutputList>()
    expectTypeOf<Out<typeof BudgetReportSchema>>().toEqualTypeOf<BudgetReport>()
    // The wire also carries events of types this version does not know (opaque on read).
    expectTypeOf<TurnResponse>().toExtend<Out<typeof TurnResponseSchema>>()
    expectTypeOf<Omit<Out<typeof TurnResponseSchema>, 'events'>>().toEqualTypeOf<
      Omit<TurnResponse, 'events'>
    >()
  })

  it('for the agent layer', () => {
    expectTypeOf<Out<typeof ArtifactEntrySchema>>().toEqualTypeOf<ArtifactEntry>()
    expectTypeOf<Same<Out<typeof ArtifactViewSchema>, ArtifactView>>().toEqualTypeOf<true>()
    expectTypeOf<Out<typeof OrientationViewSchema>>().toEqualTypeOf<OrientationView>()
    expectTypeOf<HandoffResponse>().toExtend<Out<typeof HandoffResponseSchema>>()
    expectTypeOf<Out<typeof VerificationResultSchema>>().toEqualTypeOf<VerificationResult>()
    expectTypeOf<Same<Out<typeof LoopViewSchema>, LoopView>>().toEqualTypeOf<true>()
    expectTypeOf<LoopStepResponse>().toExtend<Out<typeof LoopStepResponseSchema>>()
  })

  it('reads the wire: events validated, unknown event types kept opaque', () => {
    const answer = TurnResponseSchema.parse({
      turn_id: 'turn-1',
      status: 'completed',
      events: [{ type: 'turn.started' }, { type: 'vendor.new_event', detail: 1 }],
      next_seq: 7,
    })
    expect(answer.events[0]).toEqual({ type: 'turn.started' })
    expect(answer.events[1]).toMatchObject({ type: 'unknown', original_type: 'vendor.new_event' })
    // A known event with a wrong shape is refused, not passed on.
    expect(
      TurnResponseSchema.safeParse({
        turn_id: 'turn-1',
        status: 'completed',
        events: [{ type: 'thread.started' }],
        next_seq: 1,
      }).success,
    ).toBe(false)
    const line = JSON.parse(serializeVersionedLine({ type: 'thread.started', thread_id: 't' }))
    expect(EventFeedLineSchema.parse({ seq: 0, ...line }).event).toEqual({
      type: 'thread.started',
      thread_id: 't',
    })
    expect(OrientationViewSchema.safeParse({ session_id: 's', orientation: null }).success).toBe(
      true,
    )
  })
})
