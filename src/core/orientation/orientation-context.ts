import type { HandoffRequest } from '../../contract/handoff.ts'
import { CONTEXT_RESET_BANNER } from '../compaction/context-reset-policy.ts'
import { renderHandoffPrompt } from '../plan/handoff-prompt.ts'
import { estimateTokens } from '../session/fork-history.ts'
import { truncateText } from './artifact-summaries.ts'

/**
 * VT Code's `OrientationContext` (core/agent/orient.rs): what an agent reads before it acts —
 * summaries of the progress ledger and harness artifacts, the recent git log, loop memory, the
 * previous compaction summary, a context reset manifest, and a previous agent's handoff. Each
 * field is one section body (already a summary plus a reference to the full artifact), absent
 * when there is nothing. Rendered as `[Orientation Context]` + `###` sections in VT Code's
 * order, then the handoff prompt; nothing at all when every field is absent.
 */
export interface OrientationContext {
  progress_summary?: string
  spec_summary?: string
  contract_summary?: string
  sprint_contract_summary?: string
  evaluation_summary?: string
  outcome_verification_summary?: string
  recent_git_log?: string
  loop_notes?: string
  loop_decisions?: string
  compaction_summary?: string
  feature_list_summary?: string
  context_reset_manifest?: string
  handoff?: HandoffRequest
}

export const ORIENTATION_HEADER = '[Orientation Context]'

export type OrientationField = Exclude<keyof OrientationContext, 'handoff'>
type Field = OrientationField

/** Section titles in VT Code's order. */
const SECTIONS: readonly (readonly [Field, string])[] = [
  ['progress_summary', 'Progress'],
  ['spec_summary', 'Spec'],
  ['contract_summary', 'Contract'],
  ['sprint_contract_summary', 'Sprint Contract'],
  ['evaluation_summary', 'Last Evaluation'],
  ['outcome_verification_summary', 'Outcome Verification'],
  ['recent_git_log', 'Recent Git Log'],
  ['loop_notes', 'Loop Notes'],
  ['loop_decisions', 'Loop Decisions'],
  ['compaction_summary', 'Previous Session Summary'],
  ['feature_list_summary', 'Feature List'],
  ['context_reset_manifest', 'Context Reset'],
]

/** Cut first when over budget; the reset banner and the handoff go last. */
const TRIM_ORDER: readonly (Field | 'handoff')[] = [
  'feature_list_summary',
  'compaction_summary',
  'loop_notes',
  'loop_decisions',
  'recent_git_log',
  'evaluation_summary',
  'outcome_verification_summary',
  'sprint_contract_summary',
  'contract_summary',
  'spec_summary',
  'progress_summary',
  'handoff',
  'context_reset_manifest',
]

export interface RenderedOrientation {
  /** '' when there is nothing to orient from. */
  text: string
  tokens: number
  /** Section titles in order (`Handoff` for the handoff prompt). */
  sections: string[]
  /** Sections cut down to their reference line to fit the budget. */
  trimmed: string[]
}

export interface RenderOptions {
  /** Estimated tokens the whole section may take. */
  budget: number
  /** What replaces a section cut for the budget (its reference to the full artifact). */
  reference?: (field: Field | 'handoff') => string
}

/** Caps of a handoff shown in an orientation (the full handoff stays where it is stored). */
const HANDOFF_CAPS = { summary: 2000, task: 4000, tests: 3000, item: 400, items: 30 }

function boundedHandoff(handoff: HandoffRequest, scale = 1): HandoffRequest {
  const cap = (text: string, max: number) =>
    truncateText(text, Math.max(40, Math.floor(max * scale)))
  const list = (items: string[]) => {
    const kept = items.slice(0, HANDOFF_CAPS.items).map((item) => cap(item, HANDOFF_CAPS.item))
    return items.length > kept.length ? [...kept, `… ${items.length - kept.length} more`] : kept
  }
  return {
    ...handoff,
    state_summary: cap(handoff.state_summary, HANDOFF_CAPS.summary),
    task_context: cap(handoff.task_context, HANDOFF_CAPS.task),
    ...(handoff.test_results !== undefined
      ? { test_results: cap(handoff.test_results, HANDOFF_CAPS.tests) }
      : {}),
    modified_files: list(handoff.modified_files),
    open_decisions: list(handoff.open_decisions),
    known_issues: list(handoff.known_issues),
    next_actions: list(handoff.next_actions),
    context_files: list(handoff.context_files),
    boundary_status: handoff.boundary_status.slice(0, HANDOFF_CAPS.items).map((item) => ({
      ...item,
      feature: cap(item.feature, HANDOFF_CAPS.item),
      ...(item.notes !== undefined ? { notes: cap(item.notes, HANDOFF_CAPS.item) } : {}),
    })),
  }
}

function sectionText(field: Field, title: string, body: string): string {
  if (field === 'context_reset_manifest') {
    return `### ${title}\n${CONTEXT_RESET_BANNER}\n\n${body.trimEnd()}`
  }
  return `### ${title}\n${body.trimEnd()}`
}

/**
 * The `[Orientation Context]` section within `budget` estimated tokens: sections are cut to
 * their reference in TRIM_ORDER until it fits, then the handoff is shortened, and as a last
 * resort the text is cut (with a marker), so the result never exceeds the budget.
 */
export function renderOrientation(
  ctx: OrientationContext,
  options: RenderOptions,
): RenderedOrientation {
  const bodies = new Map<Field | 'handoff', string>()
  for (const [field] of SECTIONS) {
    const body = ctx[field]?.trim()
    if (body) bodies.set(field, body)
  }
  const trimmed: string[] = []
  let handoffScale = 1
  const titleOf = (field: Field | 'handoff') =>
    field === 'handoff' ? 'Handoff' : (SECTIONS.find(([f]) => f === field)?.[1] ?? field)
  const compose = () => {
    const parts: string[] = []
    for (const [field, title] of SECTIONS) {
      const body = bodies.get(field)
      if (body !== undefined) parts.push(sectionText(field, title, body))
    }
    if (ctx.handoff) {
      parts.push(
        bodies.get('handoff') ?? renderHandoffPrompt(boundedHandoff(ctx.handoff, handoffScale)),
      )
    }
    return parts.length ? `${ORIENTATION_HEADER}\n\n${parts.join('\n\n')}` : ''
  }
  let text = compose()
  for (const field of TRIM_ORDER) {
    if (estimateTokens(text) <= options.budget) break
    if (field === 'handoff') {
      if (!ctx.handoff) continue
      while (estimateTokens(text) > options.budget && handoffScale > 0.05) {
        handoffScale /= 2
        text = compose()
      }
      if (estimateTokens(text) <= options.budget) {
        trimmed.push('Handoff')
        break
      }
    }
    if (!bodies.has(field) && field !== 'handoff') continue
    if (field === 'handoff' && !ctx.handoff) continue
    const reference =
      options.reference?.(field) ?? '(omitted to stay within the orientation budget)'
    if (bodies.get(field) === reference) continue
    bodies.set(field, reference)
    trimmed.push(titleOf(field))
    text = compose()
  }
  if (estimateTokens(text) > options.budget) {
    text = `${[...text].slice(0, Math.max(0, options.budget * 4 - 40)).join('')}\n[orientation cut at its token budget]`
    while (estimateTokens(text) > options.budget) text = text.slice(0, -8)
  }
  const sections = SECTIONS.filter(([field]) => bodies.has(field)).map(([, title]) => title)
  if (ctx.handoff) sections.push('Handoff')
  return { text, tokens: estimateTokens(text), sections, trimmed: [...new Set(trimmed)] }
}
