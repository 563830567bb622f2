import { describe, expect, it } from 'vitest'
import { boundedText, mcpResultText } from '../../src/core/mcp/mcp-result-text.ts'
import { mcpToolName } from '../../src/core/mcp/mcp-tool-name.ts'

describe("MCP tool names (VT Code's model-visible form)", () => {
  it('mcp__<server>__<tool>, other characters replaced by _', async () => {
    expect(await mcpToolName('context7', 'search-docs')).toBe('mcp__context7__search-docs')
    expect(await mcpToolName('gh', 'repos.list issues')).toBe('mcp__gh__repos_list_issues')
    expect(await mcpToolName('gh', '')).toBe('mcp__gh__tool')
  })

  it('a name over 64 characters keeps 55 and ends with 8 hex of its SHA-256', async () => {
    const name = await mcpToolName('provider_with_a_very_long_name', 'x'.repeat(80))
    const full = `mcp__provider_with_a_very_long_name__${'x'.repeat(80)}`
    const digest = new Uint8Array(
      await crypto.subtle.digest('SHA-256', new TextEncoder().encode(full)),
    )
    const hex = Array.from(digest.slice(0, 4), (b) => b.toString(16).padStart(2, '0')).join('')
    expect(name).toBe(`${full.slice(0, 55)}_${hex}`)
    expect(name).toHaveLength(64)
  })
})

describe('MCP results as the model reads them', () => {
  it('text per line; media and binary resources by size; links by URI', () => {
    expect(
      mcpResultText({
        isError: false,
        content: [
          { type: 'text', text: 'one' },
          { type: 'image', mimeType: 'image/png', bytes: 120 },
          { type: 'resource', uri: 'file:///a.txt', text: 'inline' },
          {
            type: 'resource',
            uri: 'file:///b.bin',
            mimeType: 'application/octet-stream',
            bytes: 9,
          },
          { type: 'resource_link', uri: 'https://x/y', name: 'y' },
        ],
      }),
    ).toBe(
      'one\n[image: image/png, 120 bytes]\ninline\n[resource file:///b.bin (application/octet-stream), 9 bytes]\n[resource link: https://x/y (y)]',
    )
  })

  it('structured content when there is no text; a bound with a notice', () => {
    expect(mcpResultText({ isError: false, content: [], structuredContent: { n: 1 } })).toBe(
      '{"n":1}',
    )
    expect(boundedText('héllo world', 6)).toBe('héllo\n[result cut at 6 bytes of 12]')
    expect(boundedText('short', 100)).toBe('short')
  })
})
