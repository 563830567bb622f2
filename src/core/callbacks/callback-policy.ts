import type { CallbackSettings } from '../../contract/callback-delivery.ts'
import { TurnlineError } from '../../contract/errors.ts'

/**
 * How completion callbacks are delivered (built by functions/callback-choice.ts from the
 * configuration; docs/configuration.md#completion-callbacks).
 */
export interface CallbackPolicy {
  /**
   * The fetch of deliveries. In multi-tenant mode it checks every address it connects to
   * (loopback, private, link-local, CGNAT, unique-local, mapped forms refused; the checked
   * address is the one connected to), like the fetch of HTTP tools' wildcard hosts.
   */
  fetch: typeof fetch
  /** The tenant's signing secret (Standard Webhooks). */
  secretFor(tenant: string): string
  /** The tenant's default callback URL, for sessions that name none. */
  defaultUrlFor(tenant: string): string | undefined
  /** http:// URLs are delivered too (TURNLINE_CALLBACK_ALLOW_HTTP); otherwise https only. */
  allowHttp: boolean
  /** One attempt's deadline (connect, send, status line). */
  timeoutMs: number
  /** Pause before retry n: `firstMs · 2^n`, at most `maxMs`; given up `giveUpAfterMs` after the
   * notice was recorded (at least a day by default). */
  retry: { firstMs: number; maxMs: number; giveUpAfterMs: number }
  /** Base of the notices' `events_url` (TURNLINE_PUBLIC_URL); absent: a path. */
  publicUrl?: string
  /** This instance's name in delivery claims. */
  owner: string
  /** A claim (lease) on a delivery lasts this long past the attempt's deadline. */
  claimMarginMs: number
  /** A batch marker whose batch never committed is dropped after this long. */
  markerGraceMs: number
  /**
   * Told when notices were recorded: a long-running server delivers them at once; a runtime
   * without a loop between requests sends a queue message (awaited, so it leaves inside the
   * invocation that committed). Never rejects: what it cannot wake, the sweep delivers.
   */
  wake?: () => void | Promise<void>
}

/** Why a callback URL cannot be used, or undefined when it can. */
export function callbackUrlProblem(
  url: string,
  { allowHttp }: Pick<CallbackPolicy, 'allowHttp'>,
): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return `${url.slice(0, 80)} is not a URL`
  }
  if (parsed.protocol === 'https:') return undefined
  if (parsed.protocol === 'http:' && allowHttp) return undefined
  return parsed.protocol === 'http:'
    ? 'callback URLs must use https (the operator has not allowed http: TURNLINE_CALLBACK_ALLOW_HTTP)'
    : `callback URLs must use https, not ${parsed.protocol}`
}

/** `…/v1/sessions/<id>/events`, absolute when the deployment's public URL is known. */
export function eventsUrl(policy: Pick<CallbackPolicy, 'publicUrl'>, sessionId: string): string {
  const base = (policy.publicUrl ?? '').replace(/\/+$/, '')
  return `${base}/v1/sessions/${encodeURIComponent(sessionId)}/events`
}

/** Refuses (400) a session's callback this deployment would not deliver: call at creation. */
export function assertCallbackAllowed(
  policy: Pick<CallbackPolicy, 'allowHttp'> | undefined,
  callback: CallbackSettings | undefined,
): void {
  if (!callback) return
  const problem = policy
    ? callbackUrlProblem(callback.url, policy)
    : 'this deployment delivers no completion callbacks'
  if (problem) {
    throw new TurnlineError('invalid_input', `callback.url: ${problem}`, {
      details: { field: 'callback.url' },
    })
  }
}
