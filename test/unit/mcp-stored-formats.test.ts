import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { parseBatch } from '../../src/contract/batch.ts'
import { parseEngineState } from '../../src/contract/engine-state.ts'
import { loadMcpCatalog, mcpCatalogKey } from '../../src/core/mcp/mcp-catalog.ts'

const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../fixtures/engine/${name}`, import.meta.url)))

const batch0 = () => parseBatch(fixture('batch-0-created.json')).state ?? {}

describe('stored formats of effort, exports and MCP (read-only fixtures)', () => {
  it('a session stored before these settings reads with their defaults', () => {
    const state = parseEngineState(batch0())
    // Absent settings mean their defaults (no MCP servers, no unified_exec, the Open Responses
    // view on, ATIF off): nothing is added to the stored configuration.
    for (const field of ['mcp_servers']) expect(state.config).not.toHaveProperty(field)
    for (const field of [
      'unified_exec',
      'open_responses_enabled',
      'atif_enabled',
      'event_log_path',
    ]) {
      expect(state.config.harness).not.toHaveProperty(field)
    }
    expect(state.mcp).toBeUndefined()
    expect(state.reasoning_tokens).toBeUndefined()
  })

  it('reads the MCP state and reasoning tokens merged over batch 0', () => {
    const patch = JSON.parse(new TextDecoder().decode(fixture('engine-state-mcp.json')))
    const state = parseEngineState({ ...batch0(), ...patch })
    expect(state.reasoning_tokens).toBe(64)
    expect(state.mcp).toEqual({
      epoch: 2,
      catalog: '0123456789abcdef',
      servers: {
        docs: {
          session_id: '5f0c8a2e-1d3b-4c6a-9e7f-2a1b3c4d5e6f',
          protocol_version: '2025-06-18',
          stale: false,
          listed: true,
        },
        gone: { stale: true },
      },
    })
  })

  it('reads the catalog object the state names; refuses another version or format', async () => {
    const store = new MemoryObjectStore()
    const root = 't/w/.vtcode/sessions/s1/'
    const patch = JSON.parse(new TextDecoder().decode(fixture('engine-state-mcp.json')))
    const state = parseEngineState({ ...batch0(), ...patch })
    await store.put(mcpCatalogKey(root, '0123456789abcdef'), fixture('mcp-catalog.json'))
    const catalog = await loadMcpCatalog(store, root, state)
    expect(catalog.docs?.map((tool) => tool.model_name)).toEqual([
      'mcp__docs__search',
      'mcp__docs__repos_list',
    ])
    expect(catalog.docs?.[0]?.read_only).toBe(true)

    const other = JSON.parse(new TextDecoder().decode(fixture('mcp-catalog.json')))
    for (const [hash, doc, code] of [
      ['1111111111111111', { ...other, version: 2 }, 'unsupported_version'],
      ['2222222222222222', { ...other, format: 'x' }, 'corrupt_data'],
    ] as const) {
      await store.put(mcpCatalogKey(root, hash), new TextEncoder().encode(JSON.stringify(doc)))
      const named = { ...state, mcp: { epoch: 3, catalog: hash, servers: {} } }
      await expect(loadMcpCatalog(store, root, named)).rejects.toMatchObject({ code })
    }
  })
})
