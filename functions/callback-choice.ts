import { egressRulesFrom } from '../src/contract/egress-rules.ts'
import { EgressRefused } from '../src/contract/transport-failure.ts'
import { CallbackOutbox, type CallbackPolicy, callbackUrlProblem } from '../src/core/session-api.ts'
import type { SessionStore } from '../src/store/session-store.ts'
import { ConfigError, type EnvConfig } from './env-config.ts'
import { literalChecked, type TenantFetchOptions } from './tenant-fetch.ts'

/**
 * The completion callbacks of a deployment (docs/configuration.md#completion-callbacks): the
 * outbox on the session store and the delivery policy. In multi-tenant mode every delivery goes
 * through the checked fetch (each address resolved and checked against the egress rules when it
 * connects, the connection made to the checked address), as the calls tenants direct do; a
 * runtime without one refuses to deliver there rather than call unchecked. A single-tenant
 * server (the operator is the only tenant) delivers with the platform's fetch.
 */
export function callbackDeps(input: {
  config: EnvConfig
  sessions: SessionStore
  singleTenant: boolean
  options: TenantFetchOptions
  platformFetch: typeof fetch
  secretFor: (tenant: string) => string
  owner: string
}): { outbox: CallbackOutbox; policy: CallbackPolicy } {
  const { config } = input
  const urls = config.TURNLINE_CALLBACK_URLS ?? {}
  const policy: CallbackPolicy = {
    fetch: input.singleTenant ? input.platformFetch : checkedCallbackFetch(config, input),
    secretFor: input.secretFor,
    defaultUrlFor: (tenant) => urls[tenant] ?? urls['*'],
    allowHttp: config.TURNLINE_CALLBACK_ALLOW_HTTP === true,
    timeoutMs: config.TURNLINE_CALLBACK_TIMEOUT_MS,
    retry: {
      firstMs: config.TURNLINE_CALLBACK_RETRY_FIRST_MS,
      maxMs: Math.max(
        config.TURNLINE_CALLBACK_RETRY_MAX_MS,
        config.TURNLINE_CALLBACK_RETRY_FIRST_MS,
      ),
      giveUpAfterMs: config.TURNLINE_CALLBACK_GIVE_UP_SECONDS * 1000,
    },
    ...(config.TURNLINE_PUBLIC_URL ? { publicUrl: config.TURNLINE_PUBLIC_URL } : {}),
    owner: input.owner,
    claimMarginMs: 5_000,
    markerGraceMs: Math.max(10 * 60_000, 2 * config.TURNLINE_LEASE_MS),
  }
  const problems = Object.entries(urls).flatMap(([tenant, url]) => {
    const problem = callbackUrlProblem(url, policy)
    return problem ? [`TURNLINE_CALLBACK_URLS: ${tenant}: ${problem}`] : []
  })
  if (problems.length > 0) throw new ConfigError(problems)
  return { outbox: new CallbackOutbox(input.sessions), policy }
}

function checkedCallbackFetch(
  config: EnvConfig,
  input: { options: TenantFetchOptions; platformFetch: typeof fetch },
): typeof fetch {
  const rules = egressRulesFrom(config)
  if (input.options.checkedFetch) return input.options.checkedFetch(rules)
  if (input.options.publicOnlyFetch) return literalChecked(rules, input.platformFetch)
  return async (resource) => {
    const host = new URL(resource instanceof Request ? resource.url : resource.toString()).host
    throw new EgressRefused(
      `${host} refused: this runtime cannot check the addresses a callback connects to`,
    )
  }
}
