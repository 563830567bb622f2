import { isIP } from 'node:net'
import type { Agent } from 'undici'
import { EgressRefused } from '../../src/contract/transport-failure.ts'
import { formatIp, type IpAddress } from '../../src/shared/ip-address.ts'
import { commonJsExports } from '../shared/commonjs-exports.ts'
import type { EgressPolicy } from '../shared/egress-policy.ts'

const CONNECT_TIMEOUT_MS = 10_000

/**
 * fetch whose every connection passes the egress policy at connect time (Node): the connector
 * of its own undici Agent resolves the host through the policy and opens the socket to a checked
 * address — the URL's first hop and every redirect alike, since each is a connection — with the
 * original name kept for TLS (SNI and the certificate check) and the `Host` header. An IP literal
 * is checked the same way. Refused: the fetch rejects with EgressRefused naming the reason.
 * undici is imported at the first call: every Node start builds this fetch, few use it, and
 * loading undici costs ≈ 70 ms of CPU (docs/performance.md, cold start).
 */
export function checkedFetch(policy: EgressPolicy): typeof fetch {
  let client: Promise<CheckedClient> | undefined
  const fetchChecked = async (input: string | URL | Request, init?: RequestInit) => {
    client ??= checkedClient(policy).catch((error: unknown) => {
      client = undefined
      throw error
    })
    const { agent, undiciFetch } = await client
    const request = input instanceof Request ? input : undefined
    const target = request ? request.url : input.toString()
    try {
      const response = await undiciFetch(target, {
        ...(request
          ? {
              method: request.method,
              headers: request.headers,
              body: request.body,
              duplex: 'half',
              redirect: request.redirect,
              signal: request.signal,
            }
          : {}),
        ...(init as object),
        dispatcher: agent,
      } as Parameters<typeof undiciFetch>[1])
      return response as unknown as Response
    } catch (error) {
      // undici wraps connector failures in TypeError('fetch failed'): say what was refused.
      const cause = (error as { cause?: unknown }).cause
      if (cause instanceof EgressRefused) throw cause
      throw error
    }
  }
  return fetchChecked as typeof fetch
}

interface CheckedClient {
  agent: Agent
  undiciFetch: typeof import('undici')['fetch']
}

/** undici's fetch and an Agent whose connector asks the policy first. */
async function checkedClient(policy: EgressPolicy): Promise<CheckedClient> {
  const { Agent, buildConnector, fetch } = commonJsExports(await import('undici'))
  const connect = buildConnector({ timeout: CONNECT_TIMEOUT_MS })
  const agent = new Agent({
    connect: (options, callback) => {
      const https = options.protocol === 'https:'
      const port = Number(options.port) || (https ? 443 : 80)
      const named = `${options.hostname}:${port}`
      const attempt = (addresses: IpAddress[], index: number) => {
        const ip = addresses[index]
        if (!ip) {
          callback(new EgressRefused(`${named}: no address answered`), null)
          return
        }
        const servername = isIP(options.hostname) ? undefined : options.hostname
        connect(
          { ...options, hostname: formatIp(ip), ...(servername ? { servername } : {}) },
          (error, socket) => {
            if (error && index + 1 < addresses.length) attempt(addresses, index + 1)
            else if (error) callback(error, null)
            else callback(null, socket)
          },
        )
      }
      policy.check(options.hostname, port).then(
        (decision) => {
          if (decision.ok) attempt(decision.addresses, 0)
          else callback(new EgressRefused(`${named} refused: ${decision.reason}`), null)
        },
        (error: unknown) =>
          callback(error instanceof Error ? error : new Error(String(error)), null),
      )
    },
  })
  return { agent, undiciFetch: fetch }
}
