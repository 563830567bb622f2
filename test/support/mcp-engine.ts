import { afterAll, beforeAll } from 'vitest'
import { createSdkMcpClient } from '../../adapters/mcp/sdk-mcp-client.ts'
import { useEngine } from './engine-fixture.ts'
import { startMcpServer, type TestMcpServer } from './mcp-server.ts'

/**
 * The engine fixture with the SDK's MCP client, and a real MCP server (the SDK's, over Streamable
 * HTTP) started for the test file: `mcp` is that server once the file's tests run.
 */
export function useMcpEngine(): {
  fixture: ReturnType<typeof useEngine>
  readonly mcp: TestMcpServer
} {
  const fixture = useEngine()
  let server: TestMcpServer | undefined
  beforeAll(async () => {
    fixture.engine.deps.mcp = { client: createSdkMcpClient(), servers: [] }
    server = await startMcpServer()
  })
  afterAll(async () => {
    await server?.close()
  })
  return {
    fixture,
    get mcp() {
      if (!server) throw new Error('the MCP server starts before the tests')
      return server
    },
  }
}
