import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import {
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker'
import { TurnlineError } from '../../src/contract/errors.ts'
import { PARSED_JSON_MAX_DEPTH } from '../../src/contract/exact-json.ts'
import { PRODUCT_NAME, PRODUCT_VERSION } from '../../src/contract/product.ts'
import { transportFailureText } from '../../src/contract/transport-failure.ts'
import type {
  McpCallOutcome,
  McpClient,
  McpConnection,
  McpConnectOptions,
  McpEndpoint,
  McpListedTool,
  McpSessionHandle,
} from '../../src/ports/mcp-client.ts'
import { deadlineSignal } from '../../src/shared/deadline-signal.ts'
import { nestedDeeperThan } from '../../src/shared/json-depth.ts'
import { redactCredentials } from '../../src/shared/redact-credentials.ts'
import { utf8Length } from '../../src/shared/utf8-length.ts'
import { MCP_LIST_BYTES } from './mcp-answer-limit.ts'
import { toCallOutcome, toListedTool } from './mcp-results.ts'

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

/** What a deployment server's refusal of the operator's credentials tells tenants. */
export const OPERATOR_REFUSED_TEXT =
  "the server refused the deployment's credentials (its answer is not shown: it may name them)"

/** Pages of `tools/list` followed at most (a runaway cursor loop stops here). */
const MAX_LIST_PAGES = 50

/**
 * McpClient over the official SDK (`@modelcontextprotocol/sdk`): Streamable HTTP, an MCP
 * session per server resumed across invocations by its `Mcp-Session-Id`, and a listening
 * stream for `notifications/tools/list_changed` while a connection is open. A server that
 * forgot the session (HTTP 404) gets a fresh `initialize`, and the request is sent once more;
 * the catalog is then stale. Schemas are validated with @cfworker/json-schema (no code
 * generation), so the client also runs in workerd.
 */
export interface SdkMcpClientOptions {
  /** The fetch of a session's own servers. */
  fetch?: FetchLike
  /** The fetch of the deployment's servers (`endpoint.operator`); `fetch` without it. */
  operatorFetch?: FetchLike
}

export function createSdkMcpClient(options: SdkMcpClientOptions = {}): McpClient {
  return {
    async connect(endpoint, connectOptions) {
      const fetch = endpoint.operator ? (options.operatorFetch ?? options.fetch) : options.fetch
      const connection = new SdkMcpConnection(endpoint, connectOptions, fetch)
      await connection.open(connectOptions.resume)
      return connection
    },
  }
}

class SdkMcpConnection implements McpConnection {
  private client: Client | undefined
  private transport: StreamableHTTPClientTransport | undefined
  private resumed = false

  constructor(
    private readonly endpoint: McpEndpoint,
    private readonly options: McpConnectOptions,
    private readonly fetch: FetchLike | undefined,
  ) {}

  get session(): McpSessionHandle {
    const sessionId = this.transport?.sessionId
    const protocolVersion = this.transport?.protocolVersion
    return {
      ...(sessionId ? { sessionId } : {}),
      ...(sessionId && protocolVersion ? { protocolVersion } : {}),
    }
  }

  async open(resume: McpSessionHandle | undefined): Promise<void> {
    try {
      await this.start(resume?.sessionId ? resume : undefined)
    } catch (error) {
      // A connect stopped (its signal) or failed leaves no request of its own under way.
      await this.close()
      throw this.fault(error, 'could not connect')
    }
  }

  /**
   * Every page, as far as MAX_LIST_PAGES, all of them within the endpoint's timeout, and the
   * tools of all pages together within MCP_LIST_BYTES (as JSON): each page is bounded by the
   * fetch, but pages without end would still have been kept, all of them, in the process every
   * tenant shares.
   */
  async listTools(signal?: AbortSignal): Promise<McpListedTool[]> {
    return this.request('could not list its tools', signal, async (client) => {
      const tools: McpListedTool[] = []
      let bytes = 0
      let cursor: string | undefined
      // The pages together within one timeout: 50 slow pages each just in time held the turn.
      const end = Date.now() + this.endpoint.timeoutMs
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const left = end - Date.now()
        if (left <= 0) throw new McpError(ErrorCode.RequestTimeout, 'Request timed out')
        const result = await client.listTools(cursor ? { cursor } : {}, {
          ...this.requestOptions(signal),
          timeout: left,
        })
        for (const tool of result.tools) {
          // Before anything recursive (JSON.stringify here, the catalog's write) walks it.
          if (nestedDeeperThan(tool, PARSED_JSON_MAX_DEPTH)) {
            throw this.listingRefused(`a tool nests deeper than ${PARSED_JSON_MAX_DEPTH} levels`)
          }
          bytes += utf8Length(JSON.stringify(tool))
          if (bytes > MCP_LIST_BYTES) {
            throw this.listingRefused(`its tools together exceed ${MCP_LIST_BYTES} bytes`, {
              max_bytes: MCP_LIST_BYTES,
            })
          }
          tools.push(toListedTool(tool))
        }
        cursor = result.nextCursor
        if (!cursor) break
      }
      return tools
    })
  }

  private listingRefused(why: string, details: Record<string, number> = {}): TurnlineError {
    const { name } = this.endpoint
    return new TurnlineError(
      'tool_error',
      `MCP server ${name}: could not list its tools: ${why}; none of this listing was kept`,
      { details: { server: name, ...details } },
    )
  }

  async callTool(
    name: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<McpCallOutcome> {
    return this.request(`tool ${name} failed`, signal, async (client) =>
      toCallOutcome(
        this.endpoint.name,
        await client.callTool({ name, arguments: args }, undefined, this.requestOptions(signal)),
      ),
    )
  }

  async close(): Promise<void> {
    const client = this.client
    this.client = undefined
    this.transport = undefined
    await client?.close().catch(() => {})
  }

  /** One request; an MCP session the server forgot is started anew and the request resent. */
  private async request<T>(
    what: string,
    signal: AbortSignal | undefined,
    run: (client: Client) => Promise<T>,
  ): Promise<T> {
    try {
      if (!this.client) await this.start(undefined)
      return await run(this.client as Client)
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error
      if (!(this.resumed && isStatus(error, 404))) throw this.fault(error, what)
      try {
        await this.renew()
        return await run(this.client as Client)
      } catch (again) {
        if (signal?.aborted) throw signal.reason ?? again
        throw this.fault(again, what)
      }
    }
  }

  private async start(resume: McpSessionHandle | undefined): Promise<void> {
    const { url, headers } = this.endpoint
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { ...headers } },
      ...(this.fetch ? { fetch: this.fetch } : {}),
      ...(resume?.sessionId ? { sessionId: resume.sessionId } : {}),
      // One invocation listens briefly; it does not keep reconnecting a dropped stream.
      reconnectionOptions: {
        initialReconnectionDelay: 1000,
        maxReconnectionDelay: 5000,
        reconnectionDelayGrowFactor: 1.5,
        maxRetries: 1,
      },
    })
    if (resume?.protocolVersion) transport.setProtocolVersion(resume.protocolVersion)
    const client = new Client(
      { name: PRODUCT_NAME, version: PRODUCT_VERSION },
      { capabilities: {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
    )
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.options.onToolsChanged()
    })
    // Faults of the background listening stream are not the caller's: requests report theirs.
    client.onerror = () => {}
    this.client = client
    this.transport = transport
    this.resumed = resume !== undefined
    // The SDK holds `initialize` to the timeout, not the `initialized` notification after it.
    await this.withinTimeout(client.connect(transport, this.requestOptions(this.options.signal)))
    if (!resume) return
    // Listening on the resumed session also tells whether the server still knows it. The SDK
    // waits for the stream's head without a limit: held to the request timeout and the signal.
    try {
      await this.withinTimeout(transport.resumeStream(''))
    } catch (error) {
      if (isStatus(error, 404)) await this.renew()
      else if (error instanceof McpError || this.options.signal?.aborted) throw error
    }
  }

  /** `work`, or a timeout once the endpoint's `timeoutMs` passed (the signal's reason first). */
  private async withinTimeout<T>(work: Promise<T>): Promise<T> {
    const { timeoutMs } = this.endpoint
    const outer = this.options.signal
    const deadline = deadlineSignal(timeoutMs, outer)
    const stopped = () =>
      outer?.aborted
        ? outer.reason
        : new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: timeoutMs })
    try {
      return await new Promise<T>((resolve, reject) => {
        if (deadline.signal.aborted) return reject(stopped())
        deadline.signal.addEventListener('abort', () => reject(stopped()), { once: true })
        work.then(resolve, reject)
      })
    } finally {
      deadline.clear()
    }
  }

  /** A fresh MCP session: whatever changed meanwhile was not heard, so the catalog is stale. */
  private async renew(): Promise<void> {
    await this.close()
    await this.start(undefined)
    this.options.onToolsChanged()
  }

  private requestOptions(signal: AbortSignal | undefined) {
    return { timeout: this.endpoint.timeoutMs, ...(signal ? { signal } : {}) }
  }

  /**
   * A failed request as the `tool_error` the model and the turn's events read. The server's and
   * the SDK's words go through redactCredentials, as a model provider's do (servers echo the
   * Authorization header or a token they refused), and a deployment server's refusal of the
   * operator's credentials (401, 403) is told without them; the redacted words are kept for the
   * operator in `logDetails.server_message`. A transport fault's words are the runtime's own.
   */
  private fault(error: unknown, what: string): TurnlineError {
    if (error instanceof TurnlineError) return error
    const said =
      error instanceof McpError || error instanceof StreamableHTTPError
        ? redactCredentials(error.message)
        : undefined
    const status = error instanceof StreamableHTTPError ? error.code : undefined
    const refused = this.endpoint.operator === true && (status === 401 || status === 403)
    const shown = refused
      ? `HTTP ${status}: ${OPERATOR_REFUSED_TEXT}`
      : (said ?? transportFailureText(error))
    return new TurnlineError('tool_error', `MCP server ${this.endpoint.name}: ${what}: ${shown}`, {
      details: { server: this.endpoint.name, ...(status !== undefined ? { status } : {}) },
      ...(said !== undefined ? { logDetails: { server_message: said } } : {}),
    })
  }
}

function isStatus(error: unknown, status: number): boolean {
  return error instanceof StreamableHTTPError && error.code === status
}
