import { isTurnlineError } from '../../contract/errors.ts'
import type { JsonValue } from '../../contract/json-value.ts'
import type { McpCatalogTool } from '../../contract/mcp-config.ts'
import type { McpCallOutcome } from '../../ports/mcp-client.ts'
import type { ToolHandler } from '../tools/tool-handler.ts'
import type { McpPool } from './mcp-pool.ts'
import { boundedText, mcpResultText } from './mcp-result-text.ts'

/** Bytes of the result shown in the `mcp_tool_call` item (the model gets the bounded whole). */
const ITEM_RESULT_BYTES = 6 * 1024

/**
 * One tool of an MCP server as a handler of the tool registry. A call is recorded as VT Code
 * records every call (tool_invocation, `<id>:output`) and in addition as an `mcp_tool_call` item
 * `<invocation id>:mcp` — started before the server is asked, completed with its result — so
 * the MCP detail travels with the call. A server that cannot be reached or breaks the protocol
 * fails the call; the model hears why.
 */
export function mcpToolHandler(
  pool: McpPool,
  server: string,
  tool: McpCatalogTool,
  maxResultBytes: number,
): ToolHandler {
  return {
    definition: {
      name: tool.model_name,
      description: tool.description,
      parameters: tool.input_schema,
    },
    kind: 'mcp',
    readOnly: tool.read_only,
    async run(args, ctx) {
      const id = `${ctx.itemId}:mcp`
      const base = {
        id,
        type: 'mcp_tool_call' as const,
        tool_name: tool.model_name,
        arguments: args as { [key: string]: JsonValue },
      }
      ctx.emit?.({ type: 'item.started', item: { ...base, status: 'started' } })
      let outcome: McpCallOutcome
      try {
        const connection = await pool.connection(server)
        outcome = await connection.callTool(tool.name, args, ctx.signal)
        pool.remember(server, connection)
      } catch (error) {
        if (ctx.signal?.aborted || !isTurnlineError(error, 'tool_error')) {
          // The item does not stay open: the call ended without a result.
          ctx.emit?.({
            type: 'item.completed',
            item: {
              ...base,
              result: ctx.signal?.aborted ? 'cancelled' : 'failed',
              status: 'failed',
            },
          })
          throw error
        }
        outcome = { isError: true, content: [{ type: 'text', text: error.message }] }
      }
      const output = boundedText(mcpResultText(outcome), maxResultBytes)
      ctx.emit?.({
        type: 'item.completed',
        item: {
          ...base,
          result: boundedText(output, ITEM_RESULT_BYTES),
          status: outcome.isError ? 'failed' : 'completed',
        },
      })
      return { kind: 'done', ok: !outcome.isError, output }
    },
  }
}
