import { describe, expect, it } from 'vitest'
import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { EngineState } from '../../src/contract/engine-state.ts'
import { MCP_CATALOG_FORMAT, MCP_CATALOG_VERSION } from '../../src/contract/mcp-config.ts'
import { loadMcpCatalog, mcpCatalogKey } from '../../src/core/mcp/mcp-catalog.ts'

/**
 * The process keeps the MCP catalogs it read within a bound: a server's tool list has no size
 * limit and may change at every turn, so catalogs kept for the life of the process would let one
 * tenant's sessions take the memory every tenant's turns run in.
 */
const MIB = 1024 * 1024

function catalog(description: string): Uint8Array {
  const tool = { name: 'big', model_name: 'mcp__s__big', description, input_schema: {} }
  const doc = {
    format: MCP_CATALOG_FORMAT,
    version: MCP_CATALOG_VERSION,
    servers: { s: [{ ...tool, read_only: false }] },
  }
  return new TextEncoder().encode(JSON.stringify(doc))
}

const naming = (hash: string) => ({ mcp: { epoch: 1, catalog: hash, servers: {} } }) as EngineState

describe('MCP catalogs read by the process', () => {
  it('are kept while few, and the least recently used go once they pass the bound', async () => {
    const counted = countingObjectStore(new MemoryObjectStore())
    const root = `t/w/.vtcode/sessions/s-${crypto.randomUUID()}/`
    const hashes = Array.from({ length: 24 }, (_, i) => i.toString(16).padStart(16, '0'))
    for (const [i, hash] of hashes.entries()) {
      await counted.store.put(mcpCatalogKey(root, hash), catalog(`${i}`.padEnd(MIB, 'x')))
    }
    counted.reset()
    const first = hashes[0] as string
    expect((await loadMcpCatalog(counted.store, root, naming(first))).s?.[0]?.name).toBe('big')
    await loadMcpCatalog(counted.store, root, naming(first))
    expect(counted.counts.get).toBe(1)
    // 23 more catalogs of 1 MiB each: the first is read again from the store.
    for (const hash of hashes.slice(1)) await loadMcpCatalog(counted.store, root, naming(hash))
    expect(counted.counts.get).toBe(24)
    await loadMcpCatalog(counted.store, root, naming(first))
    expect(counted.counts.get).toBe(25)
    // The most recent are still kept.
    await loadMcpCatalog(counted.store, root, naming(hashes.at(-1) as string))
    expect(counted.counts.get).toBe(25)
  })
})
