import { compileToolPattern, firstMatch } from './tool-pattern.ts'

/**
 * The permission policy of a session (`permissions{allow, deny, mode}`), decided per tool call.
 * Pattern grammar: see tool-pattern.ts. Order of evaluation:
 *
 * 1. a `deny` pattern matches → `deny` (deny always wins over allow);
 * 2. mode `plan`: read-only tools → `allow`, every other tool → `deny` (allow rules do not lift it;
 *    mark a tool `read_only` to make it usable while planning);
 * 3. an `allow` pattern matches → `allow`;
 * 4. mode `auto` → `allow`; mode `default` → `ask` (a human approves through
 *    `POST …/permissions`).
 */

export type PermissionMode = 'default' | 'plan' | 'auto'

export interface PermissionPolicy {
  allow: readonly string[]
  deny: readonly string[]
  mode: PermissionMode
}

export type PermissionVerdict = 'allow' | 'deny' | 'ask'

export interface ToolTraits {
  /** The tool only reads (a tool definition's `read_only`); false when unknown. */
  readOnly: boolean
  /**
   * Other names a rule may give the tool: an MCP tool's `mcp__<server>__<its own name>` where
   * the name the model calls differs (sanitized or cut). A rule matching any of them applies.
   */
  aliases?: readonly string[] | undefined
}

export interface PermissionEvaluation {
  decision: PermissionVerdict
  /** Why, in words fit for the tool_output detail and the model. */
  reason: string
  /** What decided: a rule (with the pattern) or the mode. */
  source: 'deny_rule' | 'allow_rule' | 'mode'
  rule?: string
}

/** The decision for one tool call, with its reason. */
export function evaluatePermission(
  policy: PermissionPolicy,
  toolName: string,
  traits: ToolTraits,
): PermissionEvaluation {
  // compiled per call: cheap (≤ 200 patterns), and never stale if the policy changes
  const names = [toolName, ...(traits.aliases ?? [])]
  const denied = firstMatchOf(policy.deny, names)
  if (denied !== undefined) {
    return {
      decision: 'deny',
      source: 'deny_rule',
      rule: denied,
      reason: `tool ${toolName} is denied by the permission rule "${denied}"`,
    }
  }
  if (policy.mode === 'plan') {
    return traits.readOnly
      ? {
          decision: 'allow',
          source: 'mode',
          reason: `plan mode allows the read-only tool ${toolName}`,
        }
      : {
          decision: 'deny',
          source: 'mode',
          reason: `plan mode allows read-only tools only; ${toolName} may change state`,
        }
  }
  const allowed = firstMatchOf(policy.allow, names)
  if (allowed !== undefined) {
    return {
      decision: 'allow',
      source: 'allow_rule',
      rule: allowed,
      reason: `tool ${toolName} is allowed by the permission rule "${allowed}"`,
    }
  }
  return policy.mode === 'auto'
    ? { decision: 'allow', source: 'mode', reason: `auto mode allows ${toolName}` }
    : {
        decision: 'ask',
        source: 'mode',
        reason: `tool ${toolName} is not in the allow list and needs approval`,
      }
}

/** The first of `patterns` that matches any of `names`. */
function firstMatchOf(patterns: readonly string[], names: readonly string[]): string | undefined {
  const compiled = patterns.map(compileToolPattern)
  for (const name of names) {
    const found = firstMatch(patterns, compiled, name)
    if (found !== undefined) return found
  }
  return undefined
}

/** `allow`, `deny` or `ask` for one tool call. */
export function decide(
  policy: PermissionPolicy,
  toolName: string,
  traits: ToolTraits,
): PermissionVerdict {
  return evaluatePermission(policy, toolName, traits).decision
}
