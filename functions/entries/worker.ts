import { AsyncLocalStorage } from 'node:async_hooks'
import type { ExecutionContext } from 'hono'
import { createDeps } from '../deps.ts'
import { workerPeer } from '../http/client-address.ts'
import { claimedDeps } from './entry-app.ts'
import { isolateApp } from './isolate-app.ts'
import { scheduledCallbacks } from './scheduled-callbacks.ts'
import { scheduledRetention } from './scheduled-retention.ts'
import { workerReferenceScript } from './worker-reference-assets.ts'

/**
 * Cloudflare Workers entry. Deps are built from the bindings on the isolate's first request (or
 * cron run) and reused. Only text bindings (vars and secrets) are configuration. A Worker has no
 * filesystem: without S3_BUCKET (and without an explicit TURNLINE_STORE) sessions live in the
 * isolate's memory, which suits `wrangler dev` and nothing else. Without TURNLINE_API_KEYS (or
 * the key registry) every request answers 500 naming the setting, unless TURNLINE_SINGLE_TENANT
 * is set (`wrangler dev`). Compaction counts with gpt-tokenizer as on every runtime, its rank
 * tables shipped as text and parsed on first use (worker-rank-table.ts).
 */
const isolate = isolateApp(
  (bindings) =>
    createDeps(textBindings(bindings), {
      memoryStoreByDefault: true,
      // The SDK's browser build reads no environment and no instance role.
      s3KeysRequired: true,
      peerAddress: workerPeer,
      // A workers.dev or custom domain is public: no keys, no service (TURNLINE_SINGLE_TENANT
      // for `wrangler dev`).
      reachableFromAnywhere: true,
      // A deployed Worker's fetch runs on Cloudflare's network: no loopback, no private network.
      publicOnlyFetch: true,
      // Spans nest by the isolate's async context (the `nodejs_als` compatibility flag).
      contextStorage: () => new AsyncLocalStorage(),
      // The API reference renderer from the Worker's static assets: /docs renders offline.
      ...workerReferenceScript(bindings),
    }).then(claimedDeps),
  (line) => console.log(line),
)

function textBindings(bindings: unknown): Record<string, string> {
  const entries = Object.entries(bindings ?? {})
  return Object.fromEntries(entries.filter((e): e is [string, string] => typeof e[1] === 'string'))
}

export default {
  fetch: (request: Request, env: unknown, ctx: ExecutionContext) =>
    isolate.fetch(request, env, ctx),

  /**
   * Cron trigger (wrangler.toml `[triggers] crons`): one sweep of the callbacks' outbox, then one
   * retention sweep over the bucket.
   */
  async scheduled(controller: { cron: string; scheduledTime: number }, env: unknown) {
    const deps = await isolate.deps(env)
    const swept = await scheduledCallbacks(deps).catch((error: unknown) => error)
    await scheduledRetention(deps, {
      now: controller.scheduledTime,
      cron: controller.cron,
    })
    if (swept !== undefined) throw swept
  },
}
