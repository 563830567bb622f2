/**
 * Context reset by harness mode (VT Code `context_reset_mode`), distinct from compaction and from
 * the `context.reset` event: when it triggers, a manifest is written to
 * `.vtcode/tasks/current_context_reset.md`; the next session starts from orientation artifacts only
 * and reads the manifest under a "Context Reset" banner, then deletes it. No event is emitted.
 */

export type ContextResetMode = 'off' | 'on_stall' | 'on_compaction'

export const CONTEXT_RESET_MANIFEST_PATH = '.vtcode/tasks/current_context_reset.md'
export const DEFAULT_CONTEXT_RESET_STALL_THRESHOLD = 2

/** Case-insensitive, `-` or `_`, surrounding space ignored; anything else is `off`. */
export function parseContextResetMode(value: unknown): ContextResetMode {
  if (typeof value !== 'string') return 'off'
  const normalized = value.trim().toLowerCase().replaceAll('-', '_')
  return normalized === 'on_stall' || normalized === 'on_compaction' ? normalized : 'off'
}

export type ContextResetTriggerKind = 'stall' | 'compaction'

export type ContextResetDecision =
  | { reset: false }
  | { reset: true; trigger: ContextResetTriggerKind; stallCount: number }

export interface ContextResetCheck {
  mode: ContextResetMode
  /** An auto-compaction just ran. */
  compacted: boolean
  /** Consecutive stalled turns. */
  stallCount: number
  /** `context_reset_stall_threshold` (> 0). */
  stallThreshold: number
}

export function decideContextReset(check: ContextResetCheck): ContextResetDecision {
  if (check.mode === 'on_compaction' && check.compacted) {
    return { reset: true, trigger: 'compaction', stallCount: 0 }
  }
  if (
    check.mode === 'on_stall' &&
    check.stallThreshold > 0 &&
    check.stallCount >= check.stallThreshold
  ) {
    return { reset: true, trigger: 'stall', stallCount: check.stallCount }
  }
  return { reset: false }
}

export interface ContextResetManifest {
  /** RFC 3339. */
  triggered_at: string
  /** `stall` or `compaction` as written; other strings are kept when read. */
  trigger: string
  stall_count: number
}

export function renderContextResetManifest(manifest: ContextResetManifest): string {
  return [
    '# Context Reset Manifest',
    '',
    ` - **Triggered at:** ${manifest.triggered_at}`,
    ` - **Trigger:** ${manifest.trigger}`,
    ` - **Stall count:** ${manifest.stall_count}`,
    '',
    'This session starts fresh from external artifacts only.',
    'Read the current feature list and progress tracker to reorient.',
    '',
  ].join('\n')
}

/**
 * Reads `- **Key:** value` lines (trimmed); undefined unless both Triggered at and Trigger are
 * there. An unreadable stall count is 0.
 */
export function parseContextResetManifest(markdown: string): ContextResetManifest | undefined {
  let triggeredAt = ''
  let trigger = ''
  let stallCount = 0
  for (const raw of markdown.split(/\r?\n/)) {
    const line = raw.trim()
    const value = (key: string) => {
      const prefix = `- **${key}:**`
      return line.startsWith(prefix) ? line.slice(prefix.length).trim() : undefined
    }
    const at = value('Triggered at')
    if (at !== undefined) {
      triggeredAt = at
      continue
    }
    const kind = value('Trigger')
    if (kind !== undefined) {
      trigger = kind
      continue
    }
    const stalls = value('Stall count')
    if (stalls !== undefined) {
      const parsed = /^\d+$/.test(stalls) ? Number(stalls) : Number.NaN
      stallCount = Number.isSafeInteger(parsed) && parsed <= 0xffff_ffff ? parsed : 0
    }
  }
  if (triggeredAt === '' || trigger === '') return undefined
  return { triggered_at: triggeredAt, trigger, stall_count: stallCount }
}

export const CONTEXT_RESET_BANNER =
  'This session starts from a clean context. Previous conversation history was deliberately ' +
  'discarded to clear noise and bad assumptions. Reorient from the artifacts below.'

/** The orientation section shown when a manifest is present (raw manifest markdown appended). */
export function contextResetOrientation(manifestMarkdown: string): string {
  return `### Context Reset\n${CONTEXT_RESET_BANNER}\n\n${manifestMarkdown}`
}
