import type { ProgressLedger, ProgressUpdate } from '../../contract/progress-ledger.ts'
import { PROGRESS_LEDGER_VERSION } from '../../contract/progress-ledger.ts'

/**
 * The ledger's arithmetic (VT Code `ProgressLedger`): completion is the share of milestones that
 * are done (1.0 when none are tracked, as VT Code); an advance clears the stall marker and nudges
 * confidence up by 0.05, a stall sets `stalled_since` once and nudges it down by 0.1.
 */

export function newLedger(sessionId: string, goal: string, now: string): ProgressLedger {
  return {
    schema_version: PROGRESS_LEDGER_VERSION,
    session_id: sessionId,
    goal,
    milestones: [],
    confidence: 1,
    stalled_since: null,
    stall_count: 0,
    advances: 0,
    updated_at: now,
    previous_session_id: null,
    handoff_summary: null,
    known_issues: [],
    git_checkpoint: null,
  }
}

export function completionRatio(ledger: ProgressLedger): number {
  if (ledger.milestones.length === 0) return 1
  const done = ledger.milestones.filter((m) => m.status === 'done').length
  return done / ledger.milestones.length
}

/** Every tracked milestone is done (and at least one is tracked). */
export function allMilestonesDone(ledger: ProgressLedger): boolean {
  return ledger.milestones.length > 0 && ledger.milestones.every((m) => m.status === 'done')
}

const round2 = (n: number) => Math.round(n * 100) / 100

export function noteAdvance(
  ledger: ProgressLedger,
  sessionId: string,
  now: string,
): ProgressLedger {
  return {
    ...ledger,
    session_id: sessionId,
    stalled_since: null,
    stall_count: 0,
    advances: ledger.advances + 1,
    confidence: round2(Math.min(1, ledger.confidence + 0.05)),
    updated_at: now,
  }
}

export function noteStall(ledger: ProgressLedger, sessionId: string, now: string): ProgressLedger {
  return {
    ...ledger,
    session_id: sessionId,
    stalled_since: ledger.stalled_since ?? now,
    stall_count: ledger.stall_count + 1,
    confidence: round2(Math.max(0, ledger.confidence - 0.1)),
    updated_at: now,
  }
}

/** Applies an update: given fields replace, `milestone_status` edits single milestones. */
export function applyProgressUpdate(
  ledger: ProgressLedger,
  update: ProgressUpdate,
  sessionId: string,
  now: string,
): { ledger: ProgressLedger; unknownMilestones: string[] } {
  let next: ProgressLedger = { ...ledger, session_id: sessionId, updated_at: now }
  if (update.goal !== undefined) next.goal = update.goal
  if (update.milestones !== undefined) next.milestones = update.milestones
  if (update.confidence !== undefined) next.confidence = update.confidence
  if (update.known_issues !== undefined) next.known_issues = update.known_issues
  if (update.git_checkpoint !== undefined) next.git_checkpoint = update.git_checkpoint
  const unknownMilestones: string[] = []
  for (const change of update.milestone_status ?? []) {
    const index = next.milestones.findIndex((m) => m.id === change.id)
    if (index < 0) {
      unknownMilestones.push(change.id)
      continue
    }
    next.milestones = next.milestones.map((m, i) =>
      i === index ? { ...m, status: change.status } : m,
    )
  }
  if (update.stalled === true) next = noteStall(next, sessionId, now)
  if (update.stalled === false) next = noteAdvance(next, sessionId, now)
  return { ledger: next, unknownMilestones }
}

/** `Goal: … | Completion: N% | Confidence: x.xx | STALLED/on track` (VT Code's orient line). */
export function progressSummary(ledger: ProgressLedger): string {
  const percent = Math.round(completionRatio(ledger) * 100)
  const status = ledger.stalled_since !== null ? 'STALLED' : 'on track'
  return `Goal: ${ledger.goal} | Completion: ${percent}% | Confidence: ${ledger.confidence.toFixed(2)} | ${status}`
}
