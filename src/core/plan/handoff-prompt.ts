import type {
  BoundaryItem,
  BoundaryStatus,
  HandoffRequest,
  HandoffRequestInput,
} from '../../contract/handoff.ts'
import { HandoffRequestSchema } from '../../contract/handoff.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'

/**
 * VT Code's handoff prompt (`HandoffRequest::to_handoff_prompt`): `## HANDOFF FROM PREVIOUS
 * AGENT`, then `###` sections — Current State, Boundary Status, Modified Files, Test Results,
 * Open Decisions, Known Issues, Recommended Next Actions, Task Context — empty ones omitted
 * (Current State and Task Context always present), parts separated by a blank line.
 */

const STATUS_LABEL: Readonly<Record<BoundaryStatus, string>> = {
  done: 'DONE',
  in_progress: 'IN PROGRESS',
  not_started: 'NOT STARTED',
  blocked: 'BLOCKED',
}

export function renderHandoffPrompt(input: HandoffRequestInput): string {
  const request: HandoffRequest = HandoffRequestSchema.parse(input)
  const parts = [
    '## HANDOFF FROM PREVIOUS AGENT',
    '',
    'Previous agent completed work and is handing off to you.',
    '',
    `### Current State\n${request.state_summary}`,
  ]
  if (request.boundary_status.length > 0) {
    const items = request.boundary_status.map((item) => {
      const head = `- [${STATUS_LABEL[item.status]}] ${item.feature}`
      return item.notes !== undefined ? `${head} -- ${item.notes}` : head
    })
    parts.push(`### Boundary Status\n${items.join('\n')}`)
  }
  if (request.modified_files.length > 0) {
    parts.push(`### Modified Files\n${request.modified_files.join('\n')}`)
  }
  if (request.test_results !== undefined) parts.push(`### Test Results\n${request.test_results}`)
  if (request.open_decisions.length > 0) {
    parts.push(`### Open Decisions\n${request.open_decisions.join('\n')}`)
  }
  if (request.known_issues.length > 0) {
    parts.push(`### Known Issues\n${request.known_issues.map((i) => `- ${i}`).join('\n')}`)
  }
  if (request.next_actions.length > 0) {
    parts.push(
      `### Recommended Next Actions\n${request.next_actions.map((a) => `1. ${a}`).join('\n')}`,
    )
  }
  parts.push(
    `### Task Context\n${request.task_context}\n\n` +
      'Continue from where the previous agent left off. ' +
      'Read the modified files to understand the current state. ' +
      "Check boundary status to know what's done vs. what needs work.",
  )
  return parts.join('\n\n')
}

/** Steps of a plan as boundary items: numbered lines, and `- [ ]` / `- [x]` checklist lines. */
export function planBoundary(plan: string, limit = 50): BoundaryItem[] {
  const items: BoundaryItem[] = []
  for (const line of plan.split('\n')) {
    const checkbox = /^\s*[-*]\s+\[( |x|X)\]\s+(.+)$/.exec(line)
    const numbered = /^\s*\d+[.)]\s+(.+)$/.exec(line)
    if (checkbox?.[2]) {
      items.push({
        feature: checkbox[2].trim(),
        status: checkbox[1] === ' ' ? 'not_started' : 'done',
      })
    } else if (numbered?.[1]) {
      items.push({ feature: numbered[1].trim(), status: 'not_started' })
    }
    if (items.length >= limit) break
  }
  return items
}

/** The task a plan answers: the first user message of the transcript that is not an intent. */
export function originalTask(history: readonly HistoryMessage[]): string | undefined {
  for (const message of history) {
    if (message.role === 'user' && message.intent_id === undefined) return message.content
  }
  return undefined
}

export interface PlanHandoffInput {
  /** The approved plan's markdown. */
  plan: string
  /** The user's original request. */
  task?: string
  /** `build` (per-step approvals) or `auto` (no confirmations), from the approval decision. */
  targetAgent: 'build' | 'auto'
  /** Task tracker text, if the session keeps one. */
  taskTracker?: string
}

/** The HandoffRequest of a plan-to-build handoff with a fresh context. */
export function planHandoffRequest(input: PlanHandoffInput): HandoffRequest {
  const task = input.task?.trim() || 'Implement the approved plan below.'
  return HandoffRequestSchema.parse({
    target_agent: input.targetAgent,
    state_summary:
      'Planning is complete and the plan below was approved for implementation. The planning ' +
      'conversation was cleared to start from a fresh context; nothing has been implemented yet.' +
      (input.taskTracker?.trim() ? `\n\nTask tracker:\n${input.taskTracker.trim()}` : ''),
    boundary_status: planBoundary(input.plan),
    task_context: `${task}\n\nApproved plan:\n\n${input.plan.trim()}`,
    next_actions: [
      'Implement the approved plan step by step, in order.',
      'Verify each step as the plan says before moving to the next.',
      'Finish with a short report of what was done and what remains.',
    ],
  })
}

/** The compact handoff directive that starts the build turn after `fresh_context`. */
export function freshContextDirective(input: PlanHandoffInput): HistoryMessage {
  return { role: 'user', content: renderHandoffPrompt(planHandoffRequest(input)) }
}
