import type { OpenTurn } from '../../contract/engine-state.ts'
import type { SessionConfig } from '../../contract/session-config.ts'

/**
 * `harness.max_tool_calls` (`max_tool_calls` of `POST /v1/responses`: in the Open Responses
 * specification "the maximum number of total calls to built-in tools that can be processed in a
 * response … any further attempts to call a tool by the model will be ignored"): the server-run
 * tool calls one turn may run. Reaching it is neither a failure nor a stop: the model's next
 * requests offer no server tool (turn/offered-tools.ts), a call it still makes is not run but
 * answered with {@link notRunOutput} (tools/tool-calls.ts), and the turn ends with the model's
 * answer. Client function calls are not counted: the client runs them. `harness.max_tool_loops`
 * (stop-conditions.ts) is another limit: it counts rounds and fails the turn.
 */
export function toolCallLimitReached(config: SessionConfig, open: OpenTurn): boolean {
  const max = config.harness.max_tool_calls
  return max !== undefined && (open.tool_calls_run ?? 0) >= max
}

/** The tool result of a server-run call the model made once the limit was reached. */
export function notRunOutput(config: SessionConfig): string {
  return `not run: max_tool_calls ${config.harness.max_tool_calls} was reached in this turn; no more tool calls are run, answer with what you have`
}
