import type { ModelRequest } from '../../src/ports/model-client.ts'

/**
 * `tool_choice` and `parallel_tool_calls` as both OpenAI APIs take them, given how the API names
 * one function (Chat: `{type: "function", function: {name}}`; Responses: `{type: "function",
 * name}`). Only for a request with tools: the APIs refuse either without them.
 */
export function toolChoiceFields<Named>(
  request: ModelRequest,
  named: (name: string) => Named,
): { tool_choice?: 'none' | 'required' | Named; parallel_tool_calls?: false } {
  const choice = request.toolChoice
  return {
    ...(choice === undefined
      ? {}
      : { tool_choice: typeof choice === 'string' ? choice : named(choice.name) }),
    ...(request.parallelToolCalls === false ? { parallel_tool_calls: false } : {}),
  }
}
