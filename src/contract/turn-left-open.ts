import type { TurnResponse, TurnStatus } from './api.ts'

/**
 * A run that ends its session with its turn (exec, a webhook delivery) whose turn stayed open
 * instead: paused before the platform's timeout (a `paused: …` warning), waiting on a command or
 * the tenant's quota, or on an approval. The session is left as it is: nothing of the turn is
 * lost, and `POST …/turns` without input continues it.
 */
export interface LeftOpen {
  status: Extract<TurnStatus, 'waiting' | 'awaiting_approval'>
  warnings: string[]
}

/** The turn's state when it stayed open; undefined when it ended. */
export function leftOpen(turn: Pick<TurnResponse, 'status' | 'warnings'>): LeftOpen | undefined {
  if (turn.status !== 'waiting' && turn.status !== 'awaiting_approval') return undefined
  return { status: turn.status, warnings: turn.warnings ?? [] }
}

/**
 * A turn that paused, open, with its work kept (before the platform's timeout, or for the
 * tenant's quota: a `paused: …` warning), which the next call continues.
 */
export function pausedTurn(turn: Pick<TurnResponse, 'status' | 'warnings'>): boolean {
  return turn.status === 'waiting' && (turn.warnings ?? []).some((w) => w.startsWith('paused: '))
}

/** What a run's answer says of its turn left open: why, and how to continue it. */
export function leftOpenMessage(sessionId: string, open: LeftOpen): string {
  const why = open.warnings.length > 0 ? open.warnings.join('; ') : open.status
  return `the run's turn did not end (${open.status}): ${why}. Its session ${sessionId} stays open: POST /v1/sessions/${sessionId}/turns without input continues it`
}
