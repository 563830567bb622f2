import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import { SessionConfigSchema } from './session-config.ts'
import { isUsableWebhookSecret } from './standard-webhooks.ts'
import { TenantNameSchema } from './tenancy.ts'

/**
 * `TURNLINE_WEBHOOKS`: named automation triggers for `POST /v1/webhooks/:name`. Each delivery
 * (Standard Webhooks signing) starts a session with `session` settings and runs one turn whose
 * input is `prompt` with `{{body}}` replaced by the delivered payload.
 */
export const WebhookConfigSchema = lazySchema(() =>
  z.strictObject({
    /** Standard Webhooks secret: `whsec_<base64>` (or raw text). */
    secret: z
      .string()
      .min(16)
      .refine(isUsableWebhookSecret, { error: 'a whsec_ secret must be base64 after the prefix' }),
    tenant: TenantNameSchema,
    session: SessionConfigSchema.default(SessionConfigSchema.parse({})),
    prompt: z.string().min(1).max(100_000).default('{{body}}'),
  }),
)
export type WebhookConfig = z.infer<typeof WebhookConfigSchema>

export const WebhooksSchema = lazySchema(() =>
  z.record(
    z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'webhook names use 1–64 characters from A-Z a-z 0-9 _ -'),
    WebhookConfigSchema,
  ),
)
