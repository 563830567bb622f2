import type { EngineState } from '../../contract/engine-state.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { outputKeeping } from '../tools/session-outputs.ts'
import type { ToolHandler } from '../tools/tool-handler.ts'
import type { InvocationDeadline } from '../turn/invocation-deadline.ts'
import { loadMcpCatalog, refreshMcpCatalog } from './mcp-catalog.ts'
import { mcpFaultLog } from './mcp-fault-log.ts'
import { McpPool } from './mcp-pool.ts'
import { sessionMcpServers } from './mcp-servers.ts'
import { mcpToolHandler } from './mcp-tool-handler.ts'

/** The MCP tools of one invocation, and the connections behind them. */
export interface McpTools {
  handlers: ToolHandler[]
  /** Ends the invocation's connections (call it when the invocation is done). */
  close(): Promise<void>
}

/**
 * The session's MCP tools for this invocation, from the catalog the engine state names. With
 * `refresh` (a new turn starts) the catalog is read again first where it is stale; otherwise
 * the tool set stays the turn's. Undefined when the session has no MCP servers.
 */
export async function openMcpTools(
  deps: ServiceDeps,
  ref: SessionRef,
  state: EngineState,
  options: {
    refresh: boolean
    warnings: string[]
    signal?: AbortSignal | undefined
    /** The platform's bound on the invocation: a server's connect and list stop near it. */
    deadline?: InvocationDeadline
  },
): Promise<McpTools | undefined> {
  if (!deps.mcp) return undefined
  const servers = sessionMcpServers(deps.mcp, deps.tools, state.config)
  if (servers.length === 0 && !state.mcp?.catalog) return undefined
  const pool = new McpPool(deps.mcp.client, servers, state, options.signal, mcpFaultLog(deps, ref))
  const objects = deps.sessions.objects
  const sessionRoot = deps.sessions.keys(ref).root
  try {
    let catalog = await loadMcpCatalog(objects, sessionRoot, state)
    if (options.refresh) {
      catalog = await refreshMcpCatalog({
        pool,
        objects,
        sessionRoot,
        state,
        current: catalog,
        warnings: options.warnings,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.deadline ? { deadline: options.deadline } : {}),
      })
    }
    const keeping = outputKeeping(deps, ref)
    const handlers = servers.flatMap((server) =>
      (server.refused ? [] : (catalog[server.name] ?? [])).map((tool) =>
        mcpToolHandler(pool, server.name, tool, deps.tools.maxResponseBytes, keeping),
      ),
    )
    return { handlers, close: () => pool.close() }
  } catch (error) {
    await pool.close()
    throw error
  }
}
