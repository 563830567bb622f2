import type { MockApi, MockStep } from './mock-openai.ts'

/**
 * Request rules of the mock OpenAI API (mock-openai.ts) — what the real API refuses with 400 —
 * and its error answers, shaped as OpenAI's.
 */

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'invalid_request_error',
  403: 'invalid_request_error',
  404: 'invalid_request_error',
  429: 'requests',
}

export function errorReply(step: MockStep, status: number): Response {
  const message = step.message ?? `mock error ${status}`
  const type = ERROR_TYPES[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error')
  return Response.json(
    { error: { message, type, param: null, code: step.code ?? null } },
    { status, headers: step.headers ?? {} },
  )
}

/**
 * What OpenAI answers 400 about `tool_choice` and `parallel_tool_calls`: either without `tools`,
 * a choice of an unknown shape, a named function not among `tools` (Chat names it in
 * `function.name`, Responses in `name`).
 */
export function toolChoiceViolation(
  api: MockApi,
  body: Record<string, unknown>,
): string | undefined {
  if (api === 'compact') return undefined
  const tools = Array.isArray(body.tools) ? (body.tools as Record<string, unknown>[]) : []
  for (const field of ['tool_choice', 'parallel_tool_calls']) {
    if (field in body && tools.length === 0) {
      return `Invalid value for '${field}': '${field}' is only allowed when 'tools' are specified.`
    }
  }
  const choice = body.tool_choice
  if (choice === undefined || ['auto', 'none', 'required'].includes(String(choice)))
    return undefined
  const named = choice as { type?: unknown; name?: unknown; function?: { name?: unknown } }
  const name = api === 'chat' ? named.function?.name : named.name
  const names = tools.map((tool) =>
    api === 'chat' ? (tool.function as { name?: unknown } | undefined)?.name : tool.name,
  )
  if (named.type !== 'function' || typeof name !== 'string') {
    return "Invalid value for 'tool_choice'."
  }
  return names.includes(name) ? undefined : `Tool choice '${name}' not found in 'tools' parameter.`
}
