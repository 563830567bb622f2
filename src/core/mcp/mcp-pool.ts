import type { EngineState } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import type { McpServerState, McpState } from '../../contract/mcp-config.ts'
import type { McpClient, McpConnection } from '../../ports/mcp-client.ts'
import type { SessionMcpServer } from './mcp-servers.ts'

/** The engine state's MCP part, created on first use. */
export function mcpState(state: EngineState): McpState {
  state.mcp ??= { epoch: 0, servers: {} }
  return state.mcp
}

export function serverState(state: EngineState, name: string): McpServerState {
  const servers = mcpState(state).servers
  servers[name] ??= {}
  return servers[name] as McpServerState
}

/**
 * The connections of one invocation to the session's MCP servers, opened on first use and
 * closed when the invocation ends. Each resumes the MCP session kept in the engine state, and
 * writes back the one in use; a `tools/list_changed` heard meanwhile marks the server stale, so
 * the next turn boundary reads its tools again.
 */
export class McpPool {
  private readonly open = new Map<string, Promise<McpConnection>>()

  constructor(
    private readonly client: McpClient,
    readonly servers: readonly SessionMcpServer[],
    private readonly state: EngineState,
    private readonly signal?: AbortSignal,
    /** Told of each request to a server that failed with a `tool_error` (the operator log). */
    private readonly onFault?: (server: SessionMcpServer, error: TurnlineError) => void,
  ) {}

  /** A request to `name` failed with `error`: passed on to the pool's listener. */
  failed(name: string, error: TurnlineError): void {
    const server = this.server(name)
    if (server) this.onFault?.(server, error)
  }

  server(name: string): SessionMcpServer | undefined {
    return this.servers.find((server) => server.name === name)
  }

  /**
   * The connection to `name`; a failed attempt is forgotten so a later call tries again. With
   * `signal` (a call's window before the platform's timeout) a connect it starts is aborted when
   * the signal is, and waiting for one under way stops then.
   */
  connection(name: string, signal?: AbortSignal): Promise<McpConnection> {
    const opening = this.open.get(name) ?? this.connect(name, signal)
    return signal ? untilAborted(opening, signal) : opening
  }

  private connect(name: string, callSignal: AbortSignal | undefined): Promise<McpConnection> {
    const server = this.server(name)
    if (!server) return Promise.reject(new Error(`no MCP server ${name} in this session`))
    if (server.refused) {
      const refusal = new TurnlineError('tool_error', server.refused, { details: { server: name } })
      return Promise.reject(refusal)
    }
    const signals = [this.signal, callSignal].filter((s): s is AbortSignal => s !== undefined)
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0]
    const kept = serverState(this.state, name)
    const resume = kept.session_id
      ? {
          sessionId: kept.session_id,
          ...(kept.protocol_version ? { protocolVersion: kept.protocol_version } : {}),
        }
      : undefined
    const opening = this.client
      .connect(server.endpoint, {
        ...(resume ? { resume } : {}),
        onToolsChanged: () => {
          serverState(this.state, name).stale = true
        },
        ...(signal ? { signal } : {}),
      })
      .then((connection) => {
        this.remember(name, connection)
        return connection
      })
    opening.catch(() => this.open.delete(name))
    this.open.set(name, opening)
    return opening
  }

  /** Keeps the MCP session in use (it changes when the server had forgotten the old one). */
  remember(name: string, connection: McpConnection): void {
    const kept = serverState(this.state, name)
    const { sessionId, protocolVersion } = connection.session
    if (sessionId) kept.session_id = sessionId
    else delete kept.session_id
    if (protocolVersion) kept.protocol_version = protocolVersion
    else delete kept.protocol_version
  }

  /** Closes every connection (the MCP sessions stay on the servers for the next invocation). */
  async close(): Promise<void> {
    const pending = [...this.open.entries()]
    this.open.clear()
    await Promise.all(
      pending.map(async ([name, opening]) => {
        const connection = await opening.catch(() => undefined)
        if (!connection) return
        this.remember(name, connection)
        await connection.close().catch(() => {})
      }),
    )
  }
}

/** `promise`, or its rejection with the signal's reason once `signal` aborts first. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}
