import type { ThreadCompletedEvent } from '../src/contract/thread-lifecycle-events.ts'

/** Plain-text pieces of the human progress view (no colours, no terminal control). */

/** `0.4s`, `12s`, `3m05s`. */
export function formatDuration(ms: number): string {
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)}s`
  const seconds = Math.round(ms / 1000)
  if (seconds < 60) return `${seconds}s`
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`
}

/** What a tool call does, in a few words: the command, the path, the session waited on. */
export function callSummary(tool: string, args: unknown): string {
  const a = typeof args === 'object' && args !== null ? (args as Record<string, unknown>) : {}
  const text = (key: string) => (typeof a[key] === 'string' ? (a[key] as string) : undefined)
  switch (tool) {
    case 'exec_command':
      return text('cmd') ?? ''
    case 'write_stdin': {
      const action = text('action') ?? (text('chars') !== undefined ? 'write' : 'poll')
      return `${action} ${text('session_id') ?? ''}`.trim()
    }
    case 'read_file':
    case 'write_file':
      return text('path') ?? ''
    case 'apply_patch': {
      const files = [
        ...(text('input') ?? '').matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm),
      ]
      return files.map((m) => m[1]).join(', ')
    }
    default:
      return typeof args === 'string' ? args : args === undefined ? '' : JSON.stringify(args)
  }
}

export interface OutputView {
  /** `exit 0`, `still running`, `failed` … */
  status: string
  ok: boolean
  /** The first lines of the output worth showing. */
  lines: string[]
  /** The command runs on (exec session id). */
  running?: string
}

const EXEC_TOOLS = new Set(['exec_command', 'write_stdin', 'unified_exec'])

/**
 * A tool's output item as a short view. The item holds the text extracted from the tool's
 * answer (VT Code's `tool_output`); a command tool's item without an exit code is a command that
 * still runs. Items written before that held the exec response's JSON, which is read too.
 */
export function outputView(
  output: string,
  exitCode: number | undefined,
  failed: boolean,
  tool?: string,
): OutputView {
  if (tool !== undefined && EXEC_TOOLS.has(tool) && !output.startsWith('{')) {
    // A command with no output yet is summarized by its field names: nothing to show.
    const lines = head(output.replace(/^Structured result with fields: .*$/m, ''))
    if (exitCode !== undefined) return { status: `exit ${exitCode}`, ok: exitCode === 0, lines }
    if (failed) return { status: 'failed', ok: false, lines }
    return { status: 'still running', ok: true, lines }
  }
  const exec = parseExec(output)
  if (exec) {
    if (exec.error !== undefined) return { status: 'refused', ok: false, lines: [exec.error] }
    if (!exec.exited) {
      return { status: 'still running', ok: true, lines: head(exec.output), running: exec.session }
    }
    const code = exec.exitCode ?? exitCode
    return { status: `exit ${code ?? '?'}`, ok: code === 0, lines: head(exec.output) }
  }
  const status = failed ? 'failed' : exitCode !== undefined ? `exit ${exitCode}` : 'done'
  return { status, ok: !failed && (exitCode === undefined || exitCode === 0), lines: head(output) }
}

interface ExecView {
  exited: boolean
  exitCode?: number
  output: string
  session?: string
  error?: string
}

function parseExec(output: string): ExecView | undefined {
  if (!output.startsWith('{')) return undefined
  try {
    const v = JSON.parse(output) as Record<string, unknown>
    if (typeof v.error === 'string' && typeof v.is_exited !== 'boolean') {
      return { exited: true, output: '', error: v.error }
    }
    if (typeof v.is_exited !== 'boolean') return undefined
    return {
      exited: v.is_exited,
      ...(typeof v.exit_code === 'number' ? { exitCode: v.exit_code } : {}),
      output: typeof v.output === 'string' ? v.output : '',
      ...(typeof v.session_id === 'string' ? { session: v.session_id } : {}),
    }
  } catch {
    return undefined
  }
}

const PREVIEW_LINES = 8

function head(text: string): string[] {
  const all = text.replace(/\s+$/, '').split('\n')
  if (all.length === 1 && all[0] === '') return []
  const shown = all.slice(0, PREVIEW_LINES).map((line) => clip(line, 200))
  if (all.length > PREVIEW_LINES) shown.push(`… ${all.length - PREVIEW_LINES} more lines`)
  return shown
}

export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, Math.max(0, max - 1))}…` : text
}

/** `success · 2 model calls · 812 tokens in (640 cached), 96 out · $0.0001` */
export function completionSummary(event: ThreadCompletedEvent, elapsedMs?: number): string {
  const parts = [
    event.subtype === 'success' ? 'success' : `${event.subtype} (${event.outcome_code})`,
  ]
  parts.push(`${event.num_turns} model call${event.num_turns === 1 ? '' : 's'}`)
  const u = event.usage
  const cached = u.cached_input_tokens
    ? ` (${u.cached_input_tokens.toLocaleString('en-US')} cached)`
    : ''
  parts.push(
    `${u.input_tokens.toLocaleString('en-US')} tokens in${cached}, ${u.output_tokens.toLocaleString('en-US')} out`,
  )
  if (event.total_cost_usd !== undefined) parts.push(`$${event.total_cost_usd.toFixed(4)}`)
  if (elapsedMs !== undefined) parts.push(formatDuration(elapsedMs))
  return parts.join(' · ')
}
