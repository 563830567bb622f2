import { sha256Hex } from '../../shared/sha256-hex.ts'

/**
 * VT Code's model-visible MCP tool name: `mcp__<server>__<tool>`, each part with every character
 * outside `A-Z a-z 0-9 _ -` replaced by `_` (an empty part is `tool`); a name longer than 64
 * characters keeps its first 55 and ends `_<first 8 hex of SHA-256 of the full name>`.
 */
export const MCP_TOOL_PREFIX = 'mcp__'
const MAX_LENGTH = 64
const HASH_LENGTH = 8

const sanitize = (part: string) => (part === '' ? 'tool' : part.replace(/[^A-Za-z0-9_-]/g, '_'))

export async function mcpToolName(server: string, tool: string): Promise<string> {
  const full = `${MCP_TOOL_PREFIX}${sanitize(server)}__${sanitize(tool)}`
  if (full.length <= MAX_LENGTH) return full
  const hex = (await sha256Hex(full)).slice(0, HASH_LENGTH)
  return `${full.slice(0, MAX_LENGTH - 1 - HASH_LENGTH)}_${hex}`
}
