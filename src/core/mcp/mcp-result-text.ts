import type { McpCallOutcome } from '../../ports/mcp-client.ts'

/**
 * What the model reads of an MCP tool's result: its text blocks, one per line; images, audio
 * and binary resources by type and size; resources by their text or URI. Structured content
 * is shown as JSON when the result has no text of its own.
 */
export function mcpResultText(outcome: McpCallOutcome): string {
  const lines: string[] = []
  for (const block of outcome.content) {
    switch (block.type) {
      case 'text':
        lines.push(block.text)
        break
      case 'image':
      case 'audio':
        lines.push(`[${block.type}: ${block.mimeType}, ${block.bytes} bytes]`)
        break
      case 'resource':
        lines.push(
          block.text ??
            `[resource ${block.uri}${block.mimeType ? ` (${block.mimeType})` : ''}${
              block.bytes !== undefined ? `, ${block.bytes} bytes` : ''
            }]`,
        )
        break
      case 'resource_link':
        lines.push(`[resource link: ${block.uri}${block.name ? ` (${block.name})` : ''}]`)
        break
    }
  }
  const hasText = outcome.content.some(
    (block) => block.type === 'text' || block.type === 'resource',
  )
  if (!hasText && outcome.structuredContent) lines.push(JSON.stringify(outcome.structuredContent))
  return lines.join('\n')
}

/** At most `limit` UTF-8 bytes, with a notice when cut. */
export function boundedText(text: string, limit: number): string {
  const bytes = new TextEncoder().encode(text)
  if (bytes.byteLength <= limit) return text
  const head = new TextDecoder().decode(bytes.slice(0, limit)).replace(/\uFFFD$/, '')
  return `${head}\n[result cut at ${limit} bytes of ${bytes.byteLength}]`
}
