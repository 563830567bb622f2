import { isTurnlineError } from '../../contract/errors.ts'
import type { JsonValue } from '../../contract/json-value.ts'
import type { McpCatalogTool } from '../../contract/mcp-config.ts'
import type { McpCallOutcome } from '../../ports/mcp-client.ts'
import { deadlineSignal } from '../../shared/deadline-signal.ts'
import { redactCredentials } from '../../shared/redact-credentials.ts'
import { utf8Length } from '../../shared/utf8-length.ts'
import type { OutputKeeping } from '../tools/kept-output.ts'
import { captureOutput } from '../tools/output-capture.ts'
import type { ToolHandler, ToolRunContext } from '../tools/tool-handler.ts'
import { stoppedCallOutput } from '../turn/invocation-deadline.ts'
import type { McpPool } from './mcp-pool.ts'
import { boundedText, mcpResultText } from './mcp-result-text.ts'
import { MCP_TOOL_PREFIX } from './mcp-tool-name.ts'

/**
 * Bytes of the result shown in the `mcp_tool_call` item (the model gets the whole result, or
 * a preview of the output artifact that keeps a longer one).
 */
const ITEM_RESULT_BYTES = 6 * 1024

/** What the model reads of a result, and whether the call failed (or the result was too large). */
async function resultOutput(
  outcome: McpCallOutcome,
  maxResultBytes: number,
  keeping: OutputKeeping | undefined,
): Promise<{ output: string; failed: boolean }> {
  // A tool's error is the server's words (an exception's message, an upstream's answer), which
  // may echo the credentials it was sent: redacted as a failed request's are.
  const text = outcome.isError ? redactCredentials(mcpResultText(outcome)) : mcpResultText(outcome)
  if (!keeping)
    return { output: boundedText(text, maxResultBytes), failed: outcome.isError === true }
  const captured = await captureOutput(
    new Response(text),
    maxResultBytes,
    keeping,
    utf8Length(text),
  )
  return {
    output: captured.text,
    failed: outcome.isError === true || captured.kind === 'too_large',
  }
}

/** A rule may name the tool as the server does (`drop.table`, a name past 64 characters). */
function ruleNamesOf(server: string, tool: McpCatalogTool): { ruleNames?: string[] } {
  const ownName = `${MCP_TOOL_PREFIX}${server}__${tool.name}`
  return ownName === tool.model_name ? {} : { ruleNames: [ownName] }
}

/**
 * The call, cut to the time the platform's timeout leaves (Lambda: `windowMs`): stopped there,
 * it is the tool's error and is not run again, for it may have taken effect.
 */
async function callInWindow(
  ctx: ToolRunContext,
  on: { pool: McpPool; server: string; tool: McpCatalogTool; args: Record<string, unknown> },
): Promise<McpCallOutcome> {
  const call = async (signal: AbortSignal | undefined) => {
    const connection = await on.pool.connection(on.server, signal)
    const result = await connection.callTool(on.tool.name, on.args, signal)
    on.pool.remember(on.server, connection)
    return result
  }
  const windowMs = ctx.windowMs?.()
  if (windowMs === undefined) return call(ctx.signal)
  const window = deadlineSignal(windowMs, ctx.signal)
  try {
    return await call(window.signal)
  } catch (error) {
    if (!window.signal.aborted || ctx.signal?.aborted) throw error
    return {
      isError: true,
      content: [{ type: 'text', text: stoppedCallOutput(on.tool.model_name, windowMs) }],
    }
  } finally {
    window.clear()
  }
}

/**
 * One tool of an MCP server as a handler of the tool registry. A call is recorded as VT Code
 * records every call (tool_invocation, `<id>:output`) and in addition as an `mcp_tool_call` item
 * `<invocation id>:mcp` — started before the server is asked, completed with its result — so
 * the MCP detail travels with the call. A result over the inline limit is kept whole as an
 * output artifact of the session (`keeping`). A server that cannot be reached or breaks the protocol
 * fails the call; the model hears why.
 */
export function mcpToolHandler(
  pool: McpPool,
  server: string,
  tool: McpCatalogTool,
  maxResultBytes: number,
  /** Where a result over `maxResultBytes` is kept whole; without it, it is cut. */
  keeping?: OutputKeeping,
): ToolHandler {
  return {
    definition: {
      name: tool.model_name,
      description: tool.description,
      parameters: tool.input_schema,
    },
    kind: 'mcp',
    readOnly: tool.read_only,
    ...ruleNamesOf(server, tool),
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
        outcome = await callInWindow(ctx, { pool, server, tool, args })
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
        pool.failed(server, error)
        outcome = { isError: true, content: [{ type: 'text', text: error.message }] }
      }
      const { output, failed } = await resultOutput(outcome, maxResultBytes, keeping)
      ctx.emit?.({
        type: 'item.completed',
        item: {
          ...base,
          result: boundedText(output, ITEM_RESULT_BYTES),
          status: failed ? 'failed' : 'completed',
        },
      })
      return { kind: 'done', ok: !failed, output }
    },
  }
}
