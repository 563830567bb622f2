import { TurnlineError } from '../../contract/errors.ts'
import type { HttpTool } from '../../contract/http-tool-config.ts'
import type { ToolDefinition } from '../../ports/model-client.ts'
import type { HttpToolPolicy } from '../engine/service-deps.ts'
import { callHttpTool } from './http-tool-call.ts'
import type { OutputKeeping } from './kept-output.ts'
import { orderCatalog } from './tool-catalog.ts'
import type { ToolHandler, ToolRunContext } from './tool-handler.ts'

/** A session's tools by name, and the deterministically ordered catalog the model sees. */
export class ToolRegistry {
  private readonly byName = new Map<string, ToolHandler>()
  readonly catalog: ToolDefinition[]

  constructor(handlers: readonly ToolHandler[]) {
    for (const handler of handlers) {
      const name = handler.definition.name
      if (this.byName.has(name)) {
        throw new TurnlineError('invalid_input', `tool name ${name} is defined twice`, {
          details: { field: 'tools' },
        })
      }
      this.byName.set(name, handler)
    }
    this.catalog = orderCatalog(
      handlers.map((h) => ({ definition: h.definition, kind: h.kind })),
    ).map((entry) => entry.definition)
  }

  get(name: string): ToolHandler | undefined {
    return this.byName.get(name)
  }

  get names(): string[] {
    return [...this.byName.keys()]
  }
}

/**
 * A session-defined HTTP tool as a handler: signed POST; an answer over the inline limit is
 * kept whole by `keeping` (the model gets a preview), or cut without it.
 */
export function httpToolHandler(
  tool: HttpTool,
  policy: HttpToolPolicy,
  keeping?: OutputKeeping,
): ToolHandler {
  return {
    definition: { name: tool.name, description: tool.description, parameters: tool.parameters },
    kind: 'http',
    readOnly: tool.read_only,
    async run(_args, ctx) {
      const result = await callHttpTool(
        policy,
        {
          tenant: ctx.tenant,
          sessionId: ctx.sessionId,
          toolCallId: ctx.toolCallId,
          now: ctx.now(),
          ...windowOf(ctx),
        },
        tool,
        ctx.rawArguments,
        ctx.signal,
        keeping,
      )
      return { kind: 'done', ok: result.ok, output: result.output }
    },
  }
}

/** How long the call may run before the platform's timeout, where that bounds it. */
function windowOf(ctx: ToolRunContext): { windowMs?: number } {
  const windowMs = ctx.windowMs?.()
  return windowMs === undefined ? {} : { windowMs }
}
