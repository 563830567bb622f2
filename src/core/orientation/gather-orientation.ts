import {
  type ArtifactKind,
  DOCUMENT_KINDS,
  type DocumentKind,
  MEMORY_KINDS,
} from '../../contract/artifacts.ts'
import { isTurnlineError } from '../../contract/errors.ts'
import type { HandoffRequest } from '../../contract/handoff.ts'
import { parseHandoffDocument } from '../../contract/handoff-document.ts'
import { parseProgressLedger } from '../../contract/progress-ledger.ts'
import { ArtifactStore } from '../artifacts/artifact-store.ts'
import { parseEntries } from '../artifacts/loop-memory.ts'
import { progressSummary } from '../artifacts/progress.ts'
import {
  DOCUMENT_LABELS,
  markdownSummary,
  recentEntries,
  truncateText,
} from './artifact-summaries.ts'
import type { OrientationContext } from './orientation-context.ts'

/**
 * The orient phase's reads: every artifact of the workspace at once (missing ones are simply
 * absent), summarized with a reference to the full text, plus the recent git log and what the
 * session itself carries (the handoff it continues from, the reset manifest it wrote). An
 * unreadable artifact is left out with a warning; it never stops the turn.
 */

const STATUS_LABEL = {
  done: 'DONE',
  in_progress: 'IN PROGRESS',
  not_started: 'NOT STARTED',
  blocked: 'BLOCKED',
}
/** Entries of notes.md and decisions.md shown (the newest). */
export const MEMORY_ENTRIES_SHOWN = 8
const COMPACTION_SUMMARY_CHARS = 1200

export interface GatherInput {
  store: ArtifactStore
  /** The `git log --oneline -5 --no-decorate` of the workspace, when it is a repository. */
  gitLog?: () => Promise<string | undefined>
  /** The handoff the session continues from; else the workspace's current handoff is read. */
  handoff?: HandoffRequest | undefined
  /** Leave any handoff out (plan → build: the handoff is the build turn's first message). */
  withoutHandoff?: boolean
  /** The reset manifest as this session wrote it; else the workspace's file, if any. */
  resetManifest?: string | undefined
  /** This session's own last compaction summary, preferred to the workspace's file. */
  compactionSummary?: string | undefined
  /** Whether the model has `read_artifact` (the references then name it). */
  artifactTools: boolean
  warnings: string[]
}

export interface GatheredOrientation {
  context: OrientationContext
  /** Where a section's full text is (for the budget's cut). */
  reference: (kind: ArtifactKind | 'git') => string
  /** The workspace reset manifest that was read (to consume once the orientation is frozen). */
  workspaceManifest?: { text: string; etag: string }
}

export function referenceFor(
  kind: ArtifactKind | 'git',
  { artifactTools }: { artifactTools: boolean },
): string {
  if (kind === 'git') return 'Full log: `git log` in the workspace.'
  const tool = artifactTools ? ` (read_artifact {"kind":"${kind}"})` : ''
  return `Full text: ${ArtifactStore.path(kind)}${tool}`
}

/** Long: the orientation's sources, gathered one after the other into one record. */
export async function gatherOrientation(input: GatherInput): Promise<GatheredOrientation> {
  const { store, warnings } = input
  const reference = (kind: ArtifactKind | 'git') =>
    referenceFor(kind, { artifactTools: input.artifactTools })
  const read = async (kind: ArtifactKind) => {
    try {
      return await store.readText(kind)
    } catch (error) {
      if (!isTurnlineError(error, 'corrupt_data')) throw error
      warnings.push(`orientation: ${ArtifactStore.path(kind)} is unreadable: ${error.message}`)
      return undefined
    }
  }
  const kinds = [
    'progress',
    ...DOCUMENT_KINDS,
    ...MEMORY_KINDS,
    'compaction_summary',
    'context_reset',
    'handoff',
  ] as const
  const [texts, git] = await Promise.all([
    Promise.all(kinds.map((kind) => read(kind))),
    input.gitLog ? input.gitLog() : Promise.resolve(undefined),
  ])
  const text = (kind: (typeof kinds)[number]) => texts[kinds.indexOf(kind)]
  const context: OrientationContext = {}
  const parsed = <T>(kind: ArtifactKind, parse: () => T): T | undefined => {
    try {
      return parse()
    } catch (error) {
      if (!isTurnlineError(error, 'corrupt_data', 'unsupported_version')) throw error
      warnings.push(`orientation: ${ArtifactStore.path(kind)} is unreadable: ${error.message}`)
      return undefined
    }
  }

  const progress = text('progress')
  const ledger = progress && parsed('progress', () => parseProgressLedger(progress.text))
  if (ledger) {
    const open = ledger.milestones.filter((m) => m.status !== 'done').slice(0, 10)
    context.progress_summary = [
      progressSummary(ledger),
      ...open.map(
        (m) =>
          `- [${STATUS_LABEL[m.status]}] ${m.id}${m.description ? ` — ${truncateText(m.description, 160)}` : ''}`,
      ),
      ...ledger.known_issues
        .slice(0, 5)
        .map((issue) => `- Known issue: ${truncateText(issue, 200)}`),
      reference('progress'),
    ].join('\n')
  }
  const document = (kind: DocumentKind) => {
    const stored = text(kind)
    const summary = stored && markdownSummary(stored.text, DOCUMENT_LABELS[kind])
    return summary ? `${summary}\n${reference(kind)}` : undefined
  }
  const assign = (field: keyof OrientationContext, value: string | undefined) => {
    if (value !== undefined) (context as Record<string, unknown>)[field] = value
  }
  assign('spec_summary', document('spec'))
  assign('contract_summary', document('contract'))
  assign('sprint_contract_summary', document('sprint_contract'))
  assign('evaluation_summary', document('evaluation'))
  assign('outcome_verification_summary', document('outcome_verification'))
  if (git?.trim()) context.recent_git_log = git.trimEnd()
  for (const [field, kind] of [
    ['loop_notes', 'notes'],
    ['loop_decisions', 'decisions'],
  ] as const) {
    const entries = parseEntries(text(kind)?.text ?? '')
    if (entries.length === 0) continue
    const earlier = entries.length - MEMORY_ENTRIES_SHOWN
    context[field] = [
      ...recentEntries(entries, MEMORY_ENTRIES_SHOWN),
      ...(earlier > 0 ? [`(${earlier} earlier ${earlier === 1 ? 'entry' : 'entries'})`] : []),
      reference(kind),
    ].join('\n')
  }
  const summary = (input.compactionSummary ?? text('compaction_summary')?.text)?.trim()
  if (summary) {
    context.compaction_summary = `${truncateText(summary, COMPACTION_SUMMARY_CHARS)}\n${reference('compaction_summary')}`
  }
  assign('feature_list_summary', document('feature_list'))

  const workspaceManifest = text('context_reset')
  const manifest = input.resetManifest ?? workspaceManifest?.text
  if (manifest?.trim()) context.context_reset_manifest = manifest.trim()

  if (!input.withoutHandoff) {
    const stored = text('handoff')
    const handoff =
      input.handoff ??
      (stored && parsed('handoff', () => parseHandoffDocument(stored.text).handoff))
    if (handoff) context.handoff = handoff
  }
  return {
    context,
    reference,
    ...(workspaceManifest && input.resetManifest === undefined
      ? { workspaceManifest: { text: workspaceManifest.text, etag: workspaceManifest.etag } }
      : {}),
  }
}
