import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * Tool permissions: `deny` wins over `allow`. Modes: `auto` (the default here: a service has no
 * one to ask unless the caller wants it) runs every tool not denied; `default` (VT Code's
 * interactive default) asks — the turn stops `awaiting_approval` — for tools not allowed;
 * `plan` allows read-only tools only. Pattern grammar: docs/permissions.md.
 */
export const PermissionsSchema = lazySchema(() =>
  z.strictObject({
    allow: z
      .array(z.string().min(1).max(200))
      .max(200)
      .default([])
      .describe('Tool names (or patterns) allowed without asking.'),
    deny: z
      .array(z.string().min(1).max(200))
      .max(200)
      .default([])
      .describe('Tool names (or patterns) never allowed.'),
    mode: z
      .enum(['default', 'plan', 'auto'])
      .default('auto')
      .describe(
        '`default` asks for unlisted tools, `plan` allows read-only tools only, `auto` allows everything not denied.',
      ),
  }),
)
export type Permissions = z.infer<typeof PermissionsSchema>
