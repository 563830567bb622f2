import type { PendingCall } from '../../contract/engine-state.ts'
import { noTelemetry, type Telemetry } from '../../ports/telemetry.ts'
import type { ToolRunResult } from './tool-handler.ts'

/**
 * Runs one tool call (a run or a resumed wait) in an `execute_tool <name>` span with the GenAI
 * conventions' tool attributes; its outcome — done, failed, still waiting — is recorded on it.
 */
export function toolSpan(
  telemetry: Telemetry | undefined,
  call: PendingCall,
  toolKind: string,
  run: () => Promise<ToolRunResult>,
): Promise<ToolRunResult> {
  return (telemetry ?? noTelemetry).span(
    `execute_tool ${call.tool_name}`,
    {
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': call.tool_name,
        'gen_ai.tool.call.id': call.tool_call_id,
        'gen_ai.tool.type': toolKind === 'mcp' ? 'extension' : 'function',
        'turnline.tool.kind': toolKind,
      },
    },
    async (span) => {
      const result = await run()
      if (result.kind === 'pending') {
        span.set({ 'turnline.tool.status': 'waiting' })
      } else {
        span.set({
          'turnline.tool.status': result.ok ? 'completed' : 'failed',
          'turnline.tool.exit_code': result.exitCode,
        })
        if (!result.ok) span.fail('tool_error')
      }
      return result
    },
  )
}
