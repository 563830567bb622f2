import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import { TurnlineError } from '../../src/contract/errors.ts'
import { PARSED_JSON_MAX_DEPTH } from '../../src/contract/exact-json.ts'
import type { McpCallOutcome, McpContentBlock, McpListedTool } from '../../src/ports/mcp-client.ts'
import { nestedDeeperThan } from '../../src/shared/json-depth.ts'

/** SDK tool → the port's view (the input schema as given, the read-only hint). */
export function toListedTool(tool: Tool): McpListedTool {
  return {
    name: tool.name,
    ...(tool.title ? { title: tool.title } : {}),
    ...(tool.description ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema as Record<string, unknown>,
    ...(tool.annotations?.readOnlyHint !== undefined
      ? { readOnlyHint: tool.annotations.readOnlyHint }
      : {}),
  }
}

/** Decoded size of base64 data, without decoding it. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding)
}

/**
 * SDK call result → content blocks the core renders (binary data as sizes, never bytes). A
 * server of the 2024-10-07 protocol answers `{toolResult}`: shown as its JSON. Structured
 * content (or a toolResult) nested deeper than PARSED_JSON_MAX_DEPTH is a fault of the server:
 * shown as JSON, it failed the turn with a RangeError instead of the call.
 */
export function toCallOutcome(
  server: string,
  result: CallToolResult | { toolResult: unknown },
): McpCallOutcome {
  const structured = 'content' in result ? result.structuredContent : result.toolResult
  if (nestedDeeperThan(structured, PARSED_JSON_MAX_DEPTH)) {
    throw new TurnlineError(
      'tool_error',
      `MCP server ${server}: its result nests deeper than ${PARSED_JSON_MAX_DEPTH} levels`,
      { details: { server } },
    )
  }
  if (!('content' in result)) {
    return { isError: false, content: [{ type: 'text', text: JSON.stringify(result.toolResult) }] }
  }
  const content: McpContentBlock[] = []
  for (const block of result.content ?? []) {
    switch (block.type) {
      case 'text':
        content.push({ type: 'text', text: block.text })
        break
      case 'image':
      case 'audio':
        content.push({ type: block.type, mimeType: block.mimeType, bytes: base64Bytes(block.data) })
        break
      case 'resource': {
        const { resource } = block
        content.push({
          type: 'resource',
          uri: resource.uri,
          ...(resource.mimeType ? { mimeType: resource.mimeType } : {}),
          ...('text' in resource && typeof resource.text === 'string'
            ? { text: resource.text }
            : 'blob' in resource && typeof resource.blob === 'string'
              ? { bytes: base64Bytes(resource.blob) }
              : {}),
        })
        break
      }
      case 'resource_link':
        content.push({
          type: 'resource_link',
          uri: block.uri,
          ...(block.name ? { name: block.name } : {}),
        })
        break
    }
  }
  return {
    isError: result.isError === true,
    content,
    ...(result.structuredContent ? { structuredContent: result.structuredContent } : {}),
  }
}
