import type { BoundaryItem, HandoffRequest } from '../../contract/handoff.ts'
import { HandoffRequestSchema } from '../../contract/handoff.ts'
import type { HandoffRouteRequest } from '../../contract/handoff-request.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { ProgressLedger } from '../../contract/progress-ledger.ts'
import { progressSummary } from '../artifacts/progress.ts'
import { truncateText } from '../orientation/artifact-summaries.ts'
import { originalTask, planBoundary } from '../plan/handoff-prompt.ts'
import type { SessionActivity } from './session-activity.ts'
import { lastTestRun, renderTestRun } from './session-activity.ts'

/**
 * The HandoffRequest of a session (VT Code §Handoff Protocol), derived from what is durable:
 * the state summary from its counters, ledger and last answer; the boundary status from the
 * ledger's milestones (else the approved plan's steps); modified files from its `file_change`
 * items; the last test run with its output; open decisions from the memory envelope; known
 * issues from the ledger, the last failure, an open turn and rejected changes; next actions
 * from unfinished milestones and failing tests; the task from the first user message. What the
 * caller gives replaces the derived text (summary, task) or is added to the derived lists.
 */

export interface HandoffSources {
  targetAgent: string
  /** The session's current transcript (for the original task). */
  history: readonly HistoryMessage[]
  activity: SessionActivity
  ledger?: ProgressLedger | undefined
  /** The approved plan of a plan-mode session, if any. */
  plan?: string | undefined
  turns: number
  modelRequests: number
  lastAnswer?: string | undefined
  lastFailure?: string | undefined
  openTurn?: string | undefined
  /** Changes a verifier rejected and that were not fixed since. */
  rejectedChanges?: string[] | undefined
  /** Open questions of the last memory envelope. */
  openQuestions?: readonly string[] | undefined
  /** The envelope's objective, when the first user message was compacted away. */
  objective?: string | undefined
  testCommand?: string | undefined
  testPattern: string
  overrides?: Partial<HandoffRouteRequest> | undefined
}

const dedupe = (items: readonly string[]) => [
  ...new Set(items.map((i) => i.trim()).filter(Boolean)),
]

function boundary(sources: HandoffSources): BoundaryItem[] {
  const fromLedger: BoundaryItem[] = (sources.ledger?.milestones ?? []).map((m) => ({
    feature: m.description ? `${m.id}: ${m.description}` : m.id,
    status: m.status,
  }))
  const derived = fromLedger.length ? fromLedger : sources.plan ? planBoundary(sources.plan) : []
  const given = sources.overrides?.boundary_status ?? []
  const named = new Set(given.map((item) => item.feature))
  return [...derived.filter((item) => !named.has(item.feature)), ...given]
}

/** Long: one record of the handoff's fields, each gathered in a line or two. */
export function buildHandoff(sources: HandoffSources): HandoffRequest {
  const { activity, ledger, overrides } = sources
  const test = lastTestRun(activity, { command: sources.testCommand, pattern: sources.testPattern })
  const failing = test !== undefined && test.exitCode !== undefined && test.exitCode !== 0

  const summaryLines = [
    `${sources.turns} turn${sources.turns === 1 ? '' : 's'}, ${sources.modelRequests} model request${sources.modelRequests === 1 ? '' : 's'}; ${activity.modifiedFiles.length} file${activity.modifiedFiles.length === 1 ? '' : 's'} modified.`,
    ...(ledger ? [progressSummary(ledger)] : []),
    ...(test
      ? [
          `Last test run: \`${test.command}\` ${test.exitCode === undefined ? 'did not finish' : test.exitCode === 0 ? 'passed' : `failed (exit code ${test.exitCode})`}.`,
        ]
      : []),
    ...(sources.lastAnswer?.trim()
      ? [`Last answer of the previous agent:\n${truncateText(sources.lastAnswer.trim(), 1500)}`]
      : []),
  ]
  const knownIssues = dedupe([
    ...(ledger?.known_issues ?? []),
    ...(sources.lastFailure
      ? [`The last turn failed: ${truncateText(sources.lastFailure, 500)}`]
      : []),
    ...(sources.openTurn ? [sources.openTurn] : []),
    ...(sources.rejectedChanges ?? []),
    ...(failing ? [`Tests fail: \`${test.command}\` exited ${test.exitCode}.`] : []),
    ...(overrides?.known_issues ?? []),
  ])
  const unfinished = (ledger?.milestones ?? []).filter((m) => m.status !== 'done')
  const nextActions = dedupe([
    ...(failing ? [`Make the failing tests pass (\`${test.command}\`).`] : []),
    ...unfinished.map((m) =>
      m.status === 'blocked'
        ? `Unblock ${m.id}${m.description ? `: ${m.description}` : ''}.`
        : `Finish ${m.id}${m.description ? `: ${m.description}` : ''}.`,
    ),
    ...(overrides?.next_actions ?? []),
  ])
  const task =
    overrides?.task_context ??
    originalTask(sources.history) ??
    sources.objective ??
    ledger?.goal ??
    'Continue the work of the previous agent.'

  return HandoffRequestSchema.parse({
    target_agent: sources.targetAgent,
    state_summary: overrides?.state_summary ?? summaryLines.join('\n'),
    modified_files: activity.modifiedFiles.map((file) =>
      file.kind === 'update'
        ? file.path
        : `${file.path} (${file.kind === 'add' ? 'added' : 'deleted'})`,
    ),
    open_decisions: dedupe([
      ...(sources.openQuestions ?? []),
      ...(overrides?.open_decisions ?? []),
    ]),
    task_context:
      sources.plan && !overrides?.task_context
        ? `${task}\n\nApproved plan:\n\n${sources.plan.trim()}`
        : task,
    context_files: dedupe(overrides?.context_files ?? []),
    ...(test ? { test_results: renderTestRun(test) } : {}),
    boundary_status: boundary(sources),
    known_issues: knownIssues,
    next_actions: nextActions.length
      ? nextActions
      : ['Review the modified files and the boundary status, then continue the task.'],
  })
}
