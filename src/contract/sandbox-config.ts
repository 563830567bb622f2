import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/** What the session's commands may do beyond their workspace (docs/configuration.md). */
export const SandboxSettingsSchema = lazySchema(() =>
  z.strictObject({
    network: z
      .boolean()
      .default(false)
      .describe(
        "Commands (and command hooks) get network access. Default false: a sandboxed command sees only its own loopback. The runner's TURNLINE_SANDBOX_NETWORK policy has the last word.",
      ),
  }),
)
export type SandboxSettings = z.infer<typeof SandboxSettingsSchema>
