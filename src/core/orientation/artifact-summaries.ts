import type { DocumentKind, MemoryEntry } from '../../contract/artifacts.ts'

/**
 * Summaries instead of full content (VT Code `harness_artifacts::read_markdown_summary`): the
 * first four lines that are neither empty nor headings, trimmed and joined with ` | `, cut to
 * 280 characters with `...`, behind a label (`Spec: …`). Undefined when nothing is left.
 */
export const SUMMARY_PREVIEW_CHARS = 280

export const DOCUMENT_LABELS: Readonly<Record<DocumentKind, string>> = {
  spec: 'Spec',
  contract: 'Contract',
  sprint_contract: 'SprintContract',
  evaluation: 'Evaluation',
  outcome_verification: 'OutcomeVerification',
  feature_list: 'FeatureList',
}

/** `text` cut to `max` characters (code points), ending with `marker` when cut. */
export function truncateText(text: string, max: number, marker = '...'): string {
  const chars = [...text]
  if (chars.length <= max) return text
  return `${chars.slice(0, Math.max(0, max - [...marker].length)).join('')}${marker}`
}

export function markdownSummary(markdown: string, label: string): string | undefined {
  const lines = markdown
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .slice(0, 4)
  if (lines.length === 0) return undefined
  return `${label}: ${truncateText(lines.join(' | '), SUMMARY_PREVIEW_CHARS)}`
}

/** The newest `max` entries as `- [at] text` lines (each cut to `maxChars`), oldest first. */
export function recentEntries(
  entries: readonly MemoryEntry[],
  max: number,
  maxChars = 240,
): string[] {
  return entries.slice(-max).map((entry) => `- [${entry.at}] ${truncateText(entry.text, maxChars)}`)
}

export function memorySummary(entries: readonly MemoryEntry[]): string | undefined {
  const last = entries.at(-1)
  if (!last) return undefined
  const count = entries.length === 1 ? '1 entry' : `${entries.length} entries`
  return `${count}; newest [${last.at}] ${truncateText(last.text, 200)}`
}

/** The last `maxLines` lines within `maxChars` (the newest output matters most). */
export function tailText(text: string, maxLines: number, maxChars: number): string {
  // trimEnd, not `/\s+$/`: that is quadratic in a run of spaces that does not end the text
  const trimmed = text.trimEnd()
  const lines = trimmed.split('\n')
  let kept = lines.slice(-maxLines).join('\n')
  if ([...kept].length > maxChars) kept = [...kept].slice(-maxChars).join('')
  const omitted = kept.length < trimmed.length
  return omitted ? `[… earlier output omitted]\n${kept}` : kept
}
