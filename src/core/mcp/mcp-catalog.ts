import type { EngineState } from '../../contract/engine-state.ts'
import { isTurnlineError } from '../../contract/errors.ts'
import {
  MCP_CATALOG_FORMAT,
  MCP_CATALOG_VERSION,
  type McpCatalogDocument,
  McpCatalogDocumentSchema,
  type McpCatalogTool,
} from '../../contract/mcp-config.ts'
import {
  readDocument,
  requireFormat,
  requireVersion,
  validateDocument,
} from '../../contract/stored-document.ts'
import type { McpListedTool } from '../../ports/mcp-client.ts'
import type { ObjectStore } from '../../ports/object-store.ts'
import { hash16 } from '../compaction/segment-boundary.ts'
import {
  deadlineWatch,
  type InvocationDeadline,
  stoppedBeforeDeadline,
} from '../turn/invocation-deadline.ts'
import type { McpPool } from './mcp-pool.ts'
import { mcpState, serverState } from './mcp-pool.ts'
import { mcpToolName } from './mcp-tool-name.ts'

/** The tools offered, per server, in the order the servers are configured. */
export type McpCatalog = McpCatalogDocument['servers']

/** Most tools one server may add to the catalog (the rest are left out, with a warning). */
const MAX_TOOLS_PER_SERVER = 256

/** `<session root>mcp/catalog-<hash>.json`. */
export function mcpCatalogKey(sessionRoot: string, hash: string): string {
  return `${sessionRoot}mcp/catalog-${hash}.json`
}

/** Catalog bytes this process keeps read at most; the least recently used go first. */
const CACHE_MAX_BYTES = 16 * 1024 * 1024

/**
 * Immutable objects, kept once read or written, within CACHE_MAX_BYTES: a server's tool list has
 * no size limit and may change every turn, so an unbounded cache let one tenant's sessions grow
 * the memory of the process every tenant shares for as long as it runs.
 */
const cache = new Map<string, { servers: McpCatalog; bytes: number }>()
let cachedBytes = 0

function recall(key: string): McpCatalog | undefined {
  const entry = cache.get(key)
  if (!entry) return undefined
  cache.delete(key)
  cache.set(key, entry)
  return entry.servers
}

function remember(key: string, servers: McpCatalog, bytes: number): void {
  const known = cache.get(key)
  if (known) {
    cache.delete(key)
    cachedBytes -= known.bytes
  }
  if (bytes > CACHE_MAX_BYTES) return
  cache.set(key, { servers, bytes })
  cachedBytes += bytes
  for (const [oldest, entry] of cache) {
    if (cachedBytes <= CACHE_MAX_BYTES) break
    cache.delete(oldest)
    cachedBytes -= entry.bytes
  }
}

/** The catalog the engine state names; empty when none was read yet. */
export async function loadMcpCatalog(
  objects: ObjectStore,
  sessionRoot: string,
  state: EngineState,
): Promise<McpCatalog> {
  const hash = state.mcp?.catalog
  if (!hash) return {}
  const key = mcpCatalogKey(sessionRoot, hash)
  const known = recall(key)
  if (known) return known
  const object = await objects.get(key)
  if (!object) return {}
  const raw = readDocument(object.body, key)
  requireFormat(raw, 'format', MCP_CATALOG_FORMAT, key)
  requireVersion(raw, 'version', [MCP_CATALOG_VERSION], key)
  const doc = validateDocument(McpCatalogDocumentSchema, raw, key)
  remember(key, doc.servers, object.body.byteLength)
  return doc.servers
}

/**
 * At a turn boundary: reads the tools of every server never read or reported changed
 * (`tools/list_changed`, or a new MCP session), keeps the last catalog of a server that cannot
 * be reached (with a warning; it is asked again next turn), and when the result differs
 * stores it as a new catalog object and opens the next catalog epoch. A different catalog
 * gives the next model request a new request segment (its catalog hash changes).
 */
export async function refreshMcpCatalog(input: {
  pool: McpPool
  objects: ObjectStore
  sessionRoot: string
  state: EngineState
  current: McpCatalog
  warnings: string[]
  signal?: AbortSignal
  /** The platform's bound on the invocation: a connect and list still under way near it stop. */
  deadline?: InvocationDeadline
}): Promise<McpCatalog> {
  const { pool, state, current, warnings } = input
  const next: McpCatalog = {}
  const taken = new Set<string>()
  for (const server of pool.servers) {
    if (server.refused) {
      // Read again once its host is allowed again.
      serverState(state, server.name).stale = true
      warnings.push(`${server.refused}: its tools are not offered`)
      continue
    }
    let tools = current[server.name]
    const kept = serverState(state, server.name)
    if (!kept.listed || kept.stale) tools = await readServerTools(input, server, tools)
    const offered = (tools ?? []).filter((tool) => {
      if (taken.has(tool.model_name)) {
        warnings.push(`MCP tool ${server.name}/${tool.name} left out: ${tool.model_name} is taken`)
        return false
      }
      taken.add(tool.model_name)
      return true
    })
    if (tools) next[server.name] = offered
  }
  await storeCatalog(input.objects, input.sessionRoot, state, next)
  return next
}

/**
 * A server's tools read again (its connect and `tools/list`); `tools`, its last read (or none),
 * when it cannot be reached, with a warning — also when the platform's timeout neared first.
 */
async function readServerTools(
  input: Parameters<typeof refreshMcpCatalog>[0],
  server: McpPool['servers'][number],
  tools: McpCatalogTool[] | undefined,
): Promise<McpCatalogTool[] | undefined> {
  const { pool, state, warnings } = input
  const kept = serverState(state, server.name)
  const offered = () =>
    `${tools ? 'its tools as last read are offered' : 'its tools are not offered'} until it answers`
  const watch =
    input.deadline && deadlineWatch(input.deadline.clock, input.deadline.timeLeft, input.signal)
  const signal = watch?.signal ?? input.signal
  const started = input.deadline?.clock.now() ?? 0
  try {
    const connection = await pool.connection(server.name, signal)
    // From here a change the server reports marks the catalog stale again.
    kept.stale = false
    const listed = await connection.listTools(signal)
    const read = await catalogTools(
      server.name,
      listed.filter((tool) => server.allows(tool.name)),
      warnings,
    )
    kept.listed = true
    return read
  } catch (error) {
    if (input.signal?.aborted) throw error
    kept.stale = true
    if (watch?.reached() && input.deadline) {
      const stopped = stoppedBeforeDeadline(input.deadline.clock.now() - started)
      warnings.push(`MCP server ${server.name}: ${stopped}; ${offered()}`)
      return tools
    }
    if (!isTurnlineError(error, 'tool_error')) throw error
    pool.failed(server.name, error)
    warnings.push(`${error.message}; ${offered()}`)
    return tools
  } finally {
    watch?.clear()
  }
}

async function catalogTools(
  server: string,
  listed: readonly McpListedTool[],
  warnings: string[],
): Promise<McpCatalogTool[]> {
  if (listed.length > MAX_TOOLS_PER_SERVER) {
    warnings.push(
      `MCP server ${server}: ${listed.length} tools, only the first ${MAX_TOOLS_PER_SERVER} are offered`,
    )
  }
  const tools: McpCatalogTool[] = []
  for (const tool of listed.slice(0, MAX_TOOLS_PER_SERVER)) {
    tools.push({
      name: tool.name,
      model_name: await mcpToolName(server, tool.name),
      description: tool.description ?? tool.title ?? '',
      input_schema: tool.inputSchema as McpCatalogTool['input_schema'],
      read_only: tool.readOnlyHint === true,
    })
  }
  return tools
}

/** Writes the catalog object (create-only, named by its content) and moves the epoch on. */
async function storeCatalog(
  objects: ObjectStore,
  sessionRoot: string,
  state: EngineState,
  catalog: McpCatalog,
): Promise<void> {
  const mcp = mcpState(state)
  const empty = Object.values(catalog).every((tools) => tools.length === 0)
  const doc: McpCatalogDocument = {
    format: MCP_CATALOG_FORMAT,
    version: MCP_CATALOG_VERSION,
    servers: catalog,
  }
  const text = JSON.stringify(doc)
  const hash = empty ? undefined : await hash16(text)
  if (hash === mcp.catalog) return
  if (hash) {
    const key = mcpCatalogKey(sessionRoot, hash)
    const bytes = new TextEncoder().encode(text)
    try {
      await objects.put(key, bytes, {
        ifNoneMatch: '*',
        contentType: 'application/json',
      })
    } catch (error) {
      // The same content under the same name: an earlier attempt wrote it already.
      if (!isTurnlineError(error, 'conflict')) throw error
    }
    remember(key, catalog, bytes.byteLength)
    mcp.catalog = hash
  } else {
    delete mcp.catalog
  }
  mcp.epoch += 1
}
