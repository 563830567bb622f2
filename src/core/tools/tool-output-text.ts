import { parseJsonObject } from '../../shared/json-object.ts'

/**
 * What a `tool_output` item shows, as VT Code derives it from a tool's answer: the model reads
 * the whole (bounded) answer, the item holds the text extracted from it.
 *
 * For an answer that is a JSON object: a `spool_path` wins (the item's output is empty and the
 * path says where the text is); otherwise the trimmed, non-empty `output`, `stdout`, `stderr`
 * and `content` strings, each once, one per line; otherwise a one-line summary (of `items`,
 * `files`, `matches` or `results` lists, else the first four field names besides `success`)
 * followed by the error message and any `message`, `critical_note`, `hint` and `next_action`.
 * Any other answer (plain text, a JSON array or scalar) is shown as it is.
 */
export interface ToolOutputPayload {
  text: string
  spoolPath?: string
}

type Json = Record<string, unknown>

const PRIMARY_KEYS = ['output', 'stdout', 'stderr', 'content'] as const
const NOTE_KEYS = ['message', 'critical_note', 'hint', 'next_action'] as const

export function toolOutputPayload(answer: string): ToolOutputPayload {
  const value = parseJsonObject(answer)
  if (!value) return { text: answer }
  const spool = value.spool_path
  if (typeof spool === 'string') return { text: '', spoolPath: spool }

  const primary: string[] = []
  for (const key of PRIMARY_KEYS) addUnique(primary, trimmedString(value, key))
  if (primary.length > 0) return { text: primary.join('\n') }

  const parts: string[] = []
  addUnique(parts, summary(value))
  addUnique(parts, errorMessage(value))
  for (const key of NOTE_KEYS) addUnique(parts, trimmedString(value, key))
  return { text: parts.join('\n') }
}

function trimmedString(value: Json, key: string): string | undefined {
  const field = value[key]
  if (typeof field !== 'string') return undefined
  const trimmed = field.trim()
  return trimmed === '' ? undefined : trimmed
}

function addUnique(lines: string[], line: string | undefined): void {
  if (line !== undefined && !lines.includes(line)) lines.push(line)
}

function errorMessage(value: Json): string | undefined {
  const error = value.error
  const text =
    typeof error === 'string'
      ? error
      : typeof error === 'object' && error !== null && 'message' in error
        ? (error as { message: unknown }).message
        : undefined
  if (typeof text !== 'string') return undefined
  const trimmed = text.trim()
  return trimmed === '' ? undefined : trimmed
}

const plural = (count: number, one: string, many: string) => (count === 1 ? one : many)

function countOf(value: Json, keys: readonly string[], fallback: number): number {
  for (const key of keys) {
    const field = value[key]
    if (typeof field === 'number' && Number.isInteger(field) && field >= 0) return field
  }
  return fallback
}

/** Up to `limit` distinct trimmed strings found under the first present key of each entry. */
function samples(entries: readonly unknown[], pick: (entry: unknown) => string | undefined) {
  const found: string[] = []
  for (const entry of entries) {
    const text = pick(entry)?.trim()
    if (!text || found.includes(text)) continue
    found.push(text)
    if (found.length >= 3) break
  }
  return found
}

const field = (entry: unknown, key: string): string | undefined => {
  if (typeof entry !== 'object' || entry === null) return undefined
  const value = (entry as Json)[key]
  return typeof value === 'string' ? value : undefined
}

const pathOf = (entry: unknown) => field(entry, 'path') ?? field(entry, 'file')

function summary(value: Json): string | undefined {
  const { items, files, matches, results } = value
  if (Array.isArray(items)) {
    const total = countOf(value, ['total', 'count'], items.length)
    let fileCount = 0
    let dirCount = 0
    for (const item of items) {
      const type = field(item, 'type')
      if (type === 'file') fileCount += 1
      else if (type === 'directory') dirCount += 1
    }
    let text = `Listed ${total} ${plural(total, 'item', 'items')}`
    if (fileCount > 0 || dirCount > 0) {
      text += ` (${fileCount} ${plural(fileCount, 'file', 'files')}, ${dirCount} ${plural(dirCount, 'directory', 'directories')})`
    }
    const names = samples(items, (item) => field(item, 'path') ?? field(item, 'name'))
    return names.length ? `${text}: ${names.join(', ')}` : text
  }
  if (Array.isArray(files)) {
    const total = countOf(value, ['total'], files.length)
    const names = samples(files, (file) => (typeof file === 'string' ? file : undefined))
    const text = `Listed ${total} ${plural(total, 'file', 'files')}`
    return names.length ? `${text}: ${names.join(', ')}` : text
  }
  if (Array.isArray(matches)) {
    const total = countOf(value, ['total_match_count', 'matched_count', 'count'], matches.length)
    if (total === 0) return 'No matches found'
    const text = `Found ${total} ${plural(total, 'match', 'matches')}`
    const paths = samples(matches, pathOf)
    const where = paths.length ? paths.join(', ') : trimmedString(value, 'path')
    return where ? `${text} in ${where}` : text
  }
  if (Array.isArray(results)) {
    const total = countOf(value, ['returned', 'total', 'count'], results.length)
    let text =
      total === 0 ? 'No results found' : `Returned ${total} ${plural(total, 'result', 'results')}`
    const query = trimmedString(value, 'query')
    if (query) text += ` for \`${query}\``
    const hits = samples(results, (hit) => {
      const path = pathOf(hit)?.trim()
      if (!path) return undefined
      const line = typeof hit === 'object' && hit !== null ? (hit as Json).line : undefined
      return typeof line === 'number' ? `${path}:${line}` : path
    })
    return hits.length ? `${text}: ${hits.join(', ')}` : text
  }
  const keys = Object.keys(value)
    .filter((key) => key !== 'success')
    .slice(0, 4)
  return keys.length ? `Structured result with fields: ${keys.join(', ')}` : undefined
}
