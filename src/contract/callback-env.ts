import * as z from 'zod'
import { envJson, envFlag as flag, envInteger as integer } from './env-values.ts'

/**
 * The completion callbacks' variables (docs/configuration.md#completion-callbacks), spread into
 * the environment schema of functions/env-config.ts. An empty value counts as unset.
 */
const callbackUrls = envJson('must be a JSON object of tenant → URL').pipe(
  z.record(
    z
      .string()
      .regex(/^(\*|[A-Za-z0-9._-]{1,128})$/, 'keys are tenant names, or * for every tenant'),
    z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2048),
  ),
)

export const CallbackEnvShape = {
  /** Default callback URL per tenant (`*`: every tenant) for sessions that name none. */
  TURNLINE_CALLBACK_URLS: callbackUrls.optional(),
  /** Deliver to http:// URLs too (otherwise https only). */
  TURNLINE_CALLBACK_ALLOW_HTTP: flag.optional(),
  TURNLINE_CALLBACK_TIMEOUT_MS: integer(100, 120_000).default(10_000),
  TURNLINE_CALLBACK_RETRY_FIRST_MS: integer(10, 3_600_000).default(5_000),
  TURNLINE_CALLBACK_RETRY_MAX_MS: integer(10, 86_400_000).default(3_600_000),
  /** Attempts stop this long after the notice was recorded (default 26 hours). */
  TURNLINE_CALLBACK_GIVE_UP_SECONDS: integer(1, 30 * 86_400).default(26 * 3600),
  /** How often a long-running server sweeps the outbox (Node's delivery loop). */
  TURNLINE_CALLBACK_SWEEP_MS: integer(10, 3_600_000).default(30_000),
  /** The deployment's public base URL, for links in notices (`events_url`). */
  TURNLINE_PUBLIC_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
}
