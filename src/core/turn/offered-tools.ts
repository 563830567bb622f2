import type { OpenTurn } from '../../contract/engine-state.ts'
import type { SessionConfig } from '../../contract/session-config.ts'
import { toolChoiceNames } from '../../contract/tool-choice.ts'
import type { ModelToolChoice, ToolDefinition } from '../../ports/model-client.ts'
import { toolCallLimitReached } from '../guardrails/tool-call-limit.ts'

/** The tools one model request offers, and what the model must do with them. */
export type OfferedTools =
  | { tools: ToolDefinition[]; toolChoice?: ModelToolChoice; parallelToolCalls?: false }
  | { refused: string }

/**
 * The session's `tool_choice` and `parallel_tool_calls` applied to one request of the turn:
 * `allowed_tools` narrows the catalog to the tools it lists; `none` stays `none`; a forced
 * choice (`required`, a named function) holds only until the model has made a round of tool
 * calls in this turn (`tool_loops`), after which the model chooses, so the loop can end with an
 * answer. A choice that names a tool the session does not offer, or forces a call where no tool
 * is offered, is refused (the turn fails saying why). Once the turn has run
 * `harness.max_tool_calls` server-run calls, see {@link limitReached}.
 */
export function offeredTools(
  config: SessionConfig,
  open: OpenTurn,
  catalog: ToolDefinition[],
): OfferedTools {
  const choice = config.tool_choice ?? 'auto'
  const parallel = config.parallel_tool_calls === false ? { parallelToolCalls: false as const } : {}
  const names = toolChoiceNames(choice)
  const offered = new Set(catalog.map((tool) => tool.name))
  const missing = names.filter((name) => !offered.has(name))
  if (missing.length > 0) {
    return {
      refused: `tool_choice names ${missing.map((n) => `"${n}"`).join(', ')}, which the session does not offer`,
    }
  }
  const allowed = new Set(names)
  const tools =
    typeof choice === 'object' && choice.type === 'allowed_tools'
      ? catalog.filter((tool) => allowed.has(tool.name))
      : catalog
  const mode: ModelToolChoice | 'auto' =
    typeof choice === 'string'
      ? choice
      : choice.type === 'allowed_tools'
        ? choice.mode
        : { name: choice.name }
  const forced = mode === 'required' || typeof mode === 'object'
  if (forced && tools.length === 0) {
    return { refused: 'tool_choice requires a tool call, but the session offers no tools' }
  }
  if (toolCallLimitReached(config, open)) return limitReached(config, tools, mode, parallel)
  if (mode === 'auto' || tools.length === 0 || (forced && open.tool_loops > 0)) {
    return { tools, ...parallel }
  }
  return { tools, toolChoice: mode, ...parallel }
}

/**
 * The offer once `harness.max_tool_calls` server-run calls have run (guardrails/tool-call-limit.ts):
 * only the client's functions, which the limit does not count, the model choosing; with none,
 * every tool with `tool_choice: none`, so the model answers (a provider that reads tool calls in
 * the transcript gets the definitions of the tools they name).
 */
function limitReached(
  config: SessionConfig,
  tools: ToolDefinition[],
  mode: ModelToolChoice | 'auto',
  parallel: { parallelToolCalls?: false },
): OfferedTools {
  const client = new Set((config.client_tools ?? []).map((tool) => tool.name))
  const functions = tools.filter((tool) => client.has(tool.name))
  if (functions.length === 0 || mode === 'none') return { tools, toolChoice: 'none', ...parallel }
  return { tools: functions, ...parallel }
}
