import { TurnlineError } from '../../contract/errors.ts'
import type { HttpTool } from '../../contract/http-tool-config.ts'
import type { ToolDefinition } from '../../ports/model-client.ts'

/** VT Code's catalog order: these first, in this order, then everything else. */
const RANK: Readonly<Record<string, number>> = {
  exec_command: 0,
  write_stdin: 1,
  search_tools: 2,
  mcp_search_tools: 2,
  apply_patch: 3,
}

export interface CatalogEntry {
  definition: ToolDefinition
  /** Tool type ('http', 'builtin', …): the last tie-breaker. */
  kind: string
}

/** Deterministic order (rank, then name, then kind), so request prefixes stay cache-stable. */
export function orderCatalog(entries: readonly CatalogEntry[]): CatalogEntry[] {
  return [...entries].sort((a, b) => {
    const rank = (RANK[a.definition.name] ?? 4) - (RANK[b.definition.name] ?? 4)
    if (rank !== 0) return rank
    if (a.definition.name !== b.definition.name)
      return a.definition.name < b.definition.name ? -1 : 1
    return a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0
  })
}

/** The ordered catalog of a session's HTTP tools; duplicate names are refused. */
export function httpToolCatalog(tools: readonly HttpTool[]): CatalogEntry[] {
  const seen = new Set<string>()
  for (const tool of tools) {
    if (seen.has(tool.name)) {
      throw new TurnlineError('invalid_input', `tool name ${tool.name} is defined twice`, {
        details: { field: 'tools' },
      })
    }
    seen.add(tool.name)
  }
  return orderCatalog(
    tools.map((tool) => ({
      kind: tool.type,
      definition: { name: tool.name, description: tool.description, parameters: tool.parameters },
    })),
  )
}
