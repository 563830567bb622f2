import type { ThreadEvent } from '../../contract/thread-event.ts'
import type { ToolDefinition } from '../../ports/model-client.ts'

/** What a tool run needs to know about its call. */
export interface ToolRunContext {
  tenant: string
  sessionId: string
  /** The model's raw call id (stable across retries: idempotency for side effects). */
  toolCallId: string
  /** The tool_invocation item id. */
  itemId: string
  /** The model's argument text exactly as sent (a tool that forwards arguments sends these). */
  rawArguments: string
  now: () => number
  /** Allocates `item_<n>` ids for extra items (e.g. file_change). */
  nextItemId: () => string
  /** Milliseconds this invocation may still spend before it must commit and return. */
  remainingMs: () => number
  /**
   * How long a call started now may run before the turn must stop for the platform's timeout
   * (Lambda: turn/invocation-deadline.ts); absent where nothing bounds the request.
   */
  windowMs?: () => number | undefined
  /** Emits an item event while the tool runs (e.g. an `mcp_tool_call` as it starts). */
  emit?: (event: ThreadEvent) => void
  signal?: AbortSignal
}

export type ToolRunResult =
  | {
      kind: 'done'
      ok: boolean
      /** What the model reads (bounded by the handler). */
      output: string
      exitCode?: number
      spoolPath?: string
      /** Extra items after the output item (e.g. `file_change`). */
      events?: ThreadEvent[]
    }
  | {
      /**
       * The tool is still running and would outlive this invocation: the turn commits and
       * returns `waiting`; `resume` is kept in the open turn and handed back to `resume()`.
       */
      kind: 'pending'
      resume: Record<string, unknown>
    }

/** One tool the model can call: its definition, traits, and how to run it. */
export interface ToolHandler {
  definition: ToolDefinition
  /** 'http' (session-defined), 'builtin' (sandbox), …: the catalog's last tie-breaker. */
  kind: string
  /** Read-only tools are the only ones allowed in plan mode. */
  readOnly: boolean
  /**
   * Other names permission rules may give the tool besides `definition.name`: an MCP tool's
   * `mcp__<server>__<the server's own name>` when the name the model calls was sanitized or cut.
   */
  ruleNames?: readonly string[]
  run(args: Record<string, unknown>, ctx: ToolRunContext): Promise<ToolRunResult>
  /** Continues a `pending` run in a later invocation. */
  resume?(state: Record<string, unknown>, ctx: ToolRunContext): Promise<ToolRunResult>
}
