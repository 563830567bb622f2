import type { HttpTool } from '../../src/contract/http-tool-config.ts'
import type { callHttpTool } from '../../src/core/tools/http-tool-call.ts'

/** An HTTP tool policy that lets calls reach 127.0.0.1:`port` only, on the global fetch. */
export function localToolPolicy(
  port: number,
  timeoutMs: number,
): Parameters<typeof callHttpTool>[0] {
  return {
    fetch: (input, init) => fetch(input, init),
    allowedHosts: [`127.0.0.1:${port}`],
    secretFor: () => 'whsec_dGVzdC1zZWNyZXQtdGVzdC1zZWNyZXQ=',
    timeoutMs,
    maxResponseBytes: 1000,
  }
}

/** The read-only tool `lookup` at http://127.0.0.1:`port`/. */
export function localLookupTool(port: number, extra: Partial<HttpTool> = {}): HttpTool {
  return {
    type: 'http',
    name: 'lookup',
    description: 'Looks up',
    url: `http://127.0.0.1:${port}/`,
    parameters: { type: 'object' },
    read_only: true,
    ...extra,
  }
}
