import type { TurnlineError } from '../../contract/errors.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { serviceLog } from '../engine/service-log.ts'
import type { SessionMcpServer } from './mcp-servers.ts'

/**
 * A failed request to one of the deployment's MCP servers, for the operator: tenants read the
 * failure with credential-shaped words redacted, and without the server's words at all when it
 * refused the operator's credentials (the adapter's `tool_error`), so the server's words,
 * redacted, are logged here, once per failed request. A session's own server is its tenant's:
 * its failure is told to the tenant as it is, and not logged.
 */
export function mcpFaultLog(
  deps: Pick<ServiceDeps, 'log' | 'clock'>,
  ref: Pick<SessionRef, 'tenant' | 'sessionId'>,
): (server: SessionMcpServer, error: TurnlineError) => void {
  const log = serviceLog(deps)
  return (server, error) => {
    if (server.endpoint.operator !== true) return
    log({
      level: 'warn',
      msg: 'mcp request failed',
      tenant: ref.tenant,
      session: ref.sessionId,
      ...error.details,
      server_message: error.logDetails?.server_message,
    })
  }
}
