/**
 * A client of MCP servers over Streamable HTTP (the adapter wraps the official SDK). The core
 * sees connections that list tools and call them; everything about the protocol (initialize,
 * sessions, SSE, JSON-RPC) stays in the adapter.
 *
 * Faults (the server cannot be reached, answers an HTTP error, breaks the protocol or times
 * out) throw `TurnlineError` 'tool_error' with a message naming the server. A tool that ran and
 * failed is not a fault: its result has `isError`.
 */

export interface McpEndpoint {
  /** The server's name in the session (for messages). */
  name: string
  url: string
  headers: Readonly<Record<string, string>>
  /** Per request. */
  timeoutMs: number
  /**
   * A deployment's server (TURNLINE_MCP_SERVERS): its credentials are the operator's, so a
   * refusal of them (HTTP 401, 403) reaches tenants without the server's words.
   */
  operator?: boolean
}

/** What resumes an MCP session in a later invocation (absent fields: the server keeps none). */
export interface McpSessionHandle {
  sessionId?: string
  protocolVersion?: string
}

export interface McpListedTool {
  name: string
  title?: string
  description?: string
  /** JSON Schema of the arguments object. */
  inputSchema: Record<string, unknown>
  /** The server's `annotations.readOnlyHint`. */
  readOnlyHint?: boolean
}

export type McpContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio'; mimeType: string; bytes: number }
  | { type: 'resource'; uri: string; mimeType?: string; text?: string; bytes?: number }
  | { type: 'resource_link'; uri: string; name?: string }

export interface McpCallOutcome {
  isError: boolean
  content: McpContentBlock[]
  structuredContent?: Record<string, unknown>
}

export interface McpConnectOptions {
  /** The MCP session of an earlier invocation; a server that forgot it gets a new one. */
  resume?: McpSessionHandle
  /**
   * The server reported `notifications/tools/list_changed`, or the MCP session had to be
   * started anew (whatever changed meanwhile was not heard): the catalog is stale.
   */
  onToolsChanged: () => void
  signal?: AbortSignal
}

export interface McpConnection {
  /** The MCP session now in use (after a renewal, the new one). */
  readonly session: McpSessionHandle
  /** Every tool, following pagination. */
  listTools(signal?: AbortSignal): Promise<McpListedTool[]>
  callTool(
    name: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<McpCallOutcome>
  /** Stops listening; the MCP session stays open on the server for the next invocation. */
  close(): Promise<void>
}

export interface McpClient {
  connect(endpoint: McpEndpoint, options: McpConnectOptions): Promise<McpConnection>
}
