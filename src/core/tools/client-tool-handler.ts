import type { ClientTool } from '../../contract/client-tool.ts'
import type { ToolHandler } from './tool-handler.ts'

/** The handler kind of a client's function tool. */
export const CLIENT_TOOL_KIND = 'client'

/**
 * A function tool the client runs (`POST /v1/responses` with `tools: [{type: "function"}]`):
 * Turnline never runs it. A call leaves the turn `waiting` (the open turn records it, its
 * invocation item stays in progress) and the client's output comes back as the tool result of
 * a later request. Its arguments are the client's to check: they are handed over as the model
 * wrote them.
 */
export function clientToolHandler(tool: ClientTool): ToolHandler {
  return {
    definition: { name: tool.name, description: tool.description, parameters: tool.parameters },
    kind: CLIENT_TOOL_KIND,
    readOnly: false,
    async run(_args, ctx) {
      return { kind: 'pending', resume: { client_call_id: ctx.toolCallId } }
    },
  }
}
