import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * MCP servers over Streamable HTTP, named by a session (`mcp_servers`) or by the deployment
 * (`TURNLINE_MCP_SERVERS`), and what the engine keeps of them between invocations (engine
 * state `mcp`): the MCP session to resume and the catalog last read.
 */

/** Server names become the `<server>` of `mcp__<server>__<tool>`: no `__` inside. */
const ServerName = lazySchema(() =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'use 1–64 characters from A-Z a-z 0-9 _ -')
    .refine((name) => !name.includes('__'), 'must not contain "__" (it separates server and tool)'),
)

/** An HTTP header name (RFC 9110 token). */
const HeaderName = lazySchema(() =>
  z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/, 'not a header name'),
)

/** Headers the transport owns and a server definition may not set. */
const RESERVED_HEADERS = new Set([
  'accept',
  'content-type',
  'content-length',
  'host',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
  'connection',
  'transfer-encoding',
])

export const McpServerSchema = lazySchema(() =>
  z.strictObject({
    name: ServerName.describe('tools appear to the model as mcp__<name>__<tool>'),
    /** The Streamable HTTP endpoint (one URL for POST, GET and DELETE). */
    url: z
      .url({ protocol: /^https?$/ })
      .describe('Streamable HTTP endpoint; its host must be in TURNLINE_TOOL_ALLOWED_HOSTS'),
    headers: z
      .record(
        HeaderName,
        z
          .string()
          .max(8192)
          .regex(/^[^\r\n]*$/, 'no line breaks'),
      )
      .refine(
        (headers) =>
          Object.keys(headers).every((name) => !RESERVED_HEADERS.has(name.toLowerCase())),
        'must not set accept, content-type, mcp-session-id, mcp-protocol-version or other transport headers',
      )
      .refine((headers) => Object.keys(headers).length <= 32, 'at most 32 headers')
      .describe('sent with every request (e.g. authorization); shown as [redacted] when read back')
      .optional()
      .describe('Sent with every request, e.g. `authorization`. Not echoed back by the API.'),
    allowed_tools: z
      .array(z.string().min(1).max(200))
      .max(256)
      .describe('server-side tool names offered (permission pattern grammar); absent: all')
      .optional()
      .describe(
        "The server's tools the model may see, by their server-side names, with the permission pattern grammar (`*` globs); absent → all of them.",
      ),
    timeout_ms: z
      .number()
      .int()
      .positive()
      .max(300_000)
      .optional()
      .describe('Per request; default TURNLINE_TOOL_TIMEOUT_MS.'),
  }),
)
export type McpServer = z.infer<typeof McpServerSchema>

export const McpServersSchema = lazySchema(() =>
  z
    .array(McpServerSchema)
    .max(16)
    .refine((servers) => new Set(servers.map((s) => s.name)).size === servers.length, {
      message: 'server names must be unique',
    }),
)

/** One tool of a server's catalog as the model is offered it. */
export const McpCatalogToolSchema = lazySchema(() =>
  z.object({
    name: z.string().describe("The server's own name of the tool (what `tools/call` takes)."),
    model_name: z
      .string()
      .describe('`mcp__<server>__<tool>`, sanitized and capped at 64 characters.'),
    description: z.string(),
    input_schema: z.record(z.string(), z.json()),
    read_only: z.boolean().describe("The server's `readOnlyHint`: allowed in plan mode."),
  }),
)
export type McpCatalogTool = z.infer<typeof McpCatalogToolSchema>

export const McpServerStateSchema = lazySchema(() =>
  z.object({
    session_id: z
      .string()
      .optional()
      .describe('`Mcp-Session-Id` the server issued: later invocations resume that MCP session.'),
    protocol_version: z.string().optional(),
    stale: z
      .boolean()
      .optional()
      .describe('The catalog must be read again at the next turn boundary (`tools/list_changed`).'),
    listed: z.boolean().optional().describe("The server's tools were read at least once."),
  }),
)
export type McpServerState = z.infer<typeof McpServerStateSchema>

export const McpStateSchema = lazySchema(() =>
  z.object({
    epoch: z
      .number()
      .int()
      .nonnegative()
      .describe(
        "Incremented whenever the catalog the model sees changes (VT Code's tool catalog epoch).",
      ),
    catalog: z
      .string()
      .regex(/^[0-9a-f]{16}$/)
      .optional()
      .describe(
        'Content hash naming the catalog object `mcp/catalog-<hash>.json`; absent: no tools yet.',
      ),
    servers: z.record(z.string(), McpServerStateSchema),
  }),
)
export type McpState = z.infer<typeof McpStateSchema>

/**
 * `mcp/catalog-<hash>.json` in the session folder: the MCP tools offered, per server, as read.
 * Create-only and named by a hash of its content, so it never changes; kept out of the engine
 * state so that batches do not carry the tool schemas.
 */
export const MCP_CATALOG_FORMAT = 'turnline.mcp_catalog'
export const MCP_CATALOG_VERSION = 1
export const McpCatalogDocumentSchema = lazySchema(() =>
  z.object({
    format: z.literal(MCP_CATALOG_FORMAT),
    version: z.literal(MCP_CATALOG_VERSION),
    servers: z.record(z.string(), z.array(McpCatalogToolSchema)),
  }),
)
export type McpCatalogDocument = z.infer<typeof McpCatalogDocumentSchema>
