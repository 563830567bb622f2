/**
 * What a hook said back. A hook denies with a JSON object on its HTTP 2xx body or command stdout
 * (exit 0) in one of the Claude Code–compatible shapes VT Code reads:
 *
 *   {"decision": "deny", "reason": "…"}            ("block" is read as "deny")
 *   {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "…"}}
 *
 * or, for a command hook, by exiting with code 2 (stderr is the reason). Anything else is an
 * ordinary success.
 */

export interface HookAnswer {
  decision?: 'deny'
  reason?: string
}

/** Reads a JSON answer; non-JSON or JSON without a deny is a plain success (`{}`). */
export function parseHookAnswer(text: string): HookAnswer {
  const trimmed = text.trim()
  if (!trimmed.startsWith('{')) return {}
  let value: unknown
  try {
    value = JSON.parse(trimmed)
  } catch {
    return {}
  }
  if (typeof value !== 'object' || value === null) return {}
  const record = value as Record<string, unknown>
  if (record.decision === 'deny' || record.decision === 'block') {
    return { decision: 'deny', ...reasonOf(record.reason) }
  }
  const specific = record.hookSpecificOutput
  if (typeof specific === 'object' && specific !== null) {
    const fields = specific as Record<string, unknown>
    if (fields.permissionDecision === 'deny') {
      return { decision: 'deny', ...reasonOf(fields.permissionDecisionReason ?? record.reason) }
    }
  }
  return {}
}

function reasonOf(value: unknown): { reason?: string } {
  return typeof value === 'string' && value.trim() ? { reason: bounded(value.trim()) } : {}
}

/** Keeps diagnostics small (reasons and errors end up in events and logs). */
export function bounded(text: string, max = 2000): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`
}
