import type { McpClient } from '../../src/ports/mcp-client.ts'
import type { SdkMcpClientOptions } from './sdk-mcp-client.ts'

/**
 * The SDK's McpClient (sdk-mcp-client.ts), imported at the first connection instead of at start:
 * most deployments configure no MCP server, and loading `@modelcontextprotocol/sdk` costs every
 * start ≈ 0.1 s of CPU (docs/performance.md, cold start). A failed import is tried again at the
 * next connection.
 */
export function deferredSdkMcpClient(options: SdkMcpClientOptions = {}): McpClient {
  let loading: Promise<McpClient> | undefined
  return {
    async connect(endpoint, connectOptions) {
      loading ??= import('./sdk-mcp-client.ts').then(
        ({ createSdkMcpClient }) => createSdkMcpClient(options),
        (error: unknown) => {
          loading = undefined
          throw error
        },
      )
      return (await loading).connect(endpoint, connectOptions)
    },
  }
}
