import { AsyncLocalStorage } from 'node:async_hooks'
import type { ExecutionContext } from 'hono'
import { useRankTables } from '../../src/core/session-service.ts'
import { createDeps } from '../deps.ts'
import { workerPeer } from '../http/client-address.ts'
import { claimedDeps, type EntryApp } from './entry-app.ts'
import { isolateApp } from './isolate-app.ts'
import { scheduledCallbacks } from './scheduled-callbacks.ts'
import { scheduledRetention } from './scheduled-retention.ts'
import { consumeWorkBatch, scheduledWork, workerTrigger } from './worker-background.ts'
import type { QueueMessage } from './worker-queue.ts'
import { workerRankTables } from './worker-rank-tables.ts'
import { workerReferenceScript } from './worker-reference-assets.ts'
import { workerSocketAcceptor } from './worker-sockets.ts'

/**
 * Cloudflare Workers entry. Deps are built from the bindings on the isolate's first request (or
 * cron run) and reused. Only text bindings (vars and secrets) are configuration. A Worker has no
 * filesystem: without S3_BUCKET (and without an explicit TURNLINE_STORE) sessions live in the
 * isolate's memory, which suits `wrangler dev` and nothing else. Without TURNLINE_API_KEYS (or
 * the key registry) every request answers 500 naming the setting, unless TURNLINE_SINGLE_TENANT
 * is set (`wrangler dev`). Compaction counts tokens as on every runtime, its rank tables uploaded
 * as Data modules (worker-rank-tables.ts). With the work queue
 * bound (TURNLINE_WORK_QUEUE), background work is recorded, answered 202 and run by this
 * Worker's `queue` handler (worker-background.ts). The Open Responses WebSocket mode upgrades with
 * a `WebSocketPair` (worker-sockets.ts).
 */
useRankTables(workerRankTables)

const isolate = isolateApp(
  (bindings) =>
    createDeps(textBindings(bindings), {
      memoryStoreByDefault: true,
      peerAddress: workerPeer,
      // A workers.dev or custom domain is public: no keys, no service (TURNLINE_SINGLE_TENANT
      // for `wrangler dev`).
      reachableFromAnywhere: true,
      // Requests spread over many isolates: a bucket needs Upstash beside it.
      manyInstances: true,
      // A deployed Worker's fetch runs on Cloudflare's network: no loopback, no private network.
      publicOnlyFetch: true,
      // Spans nest by the isolate's async context (the `nodejs_als` compatibility flag).
      contextStorage: () => new AsyncLocalStorage(),
      // The API reference renderer from the Worker's static assets: /docs renders offline.
      ...workerReferenceScript(bindings),
    }).then(claimedDeps),
  (line) => console.log(line),
  workerTrigger,
  workerSocketAcceptor,
)

function textBindings(bindings: unknown): Record<string, string> {
  const entries = Object.entries(bindings ?? {})
  return Object.fromEntries(entries.filter((e): e is [string, string] => typeof e[1] === 'string'))
}

export default {
  fetch: (request: Request, env: unknown, ctx: ExecutionContext) =>
    isolate.fetch(request, env, ctx),

  /**
   * The work queue's consumer (wrangler.toml `[[queues.consumers]]`): runs the recorded work
   * each message names, or a pass over the callbacks' outbox.
   */
  async queue(batch: { readonly messages: readonly QueueMessage[] }, env: unknown) {
    const entry = await isolate.app(env)
    // Spans of the batch are exported before the invocation ends, as a request's are.
    await consumeWorkBatch(batch, entry).finally(() => entry.deps.flushTelemetry?.())
  },

  /**
   * Cron triggers (wrangler.toml `[triggers] crons`): the background work's sweep (loop
   * schedules due, work whose message was lost), one sweep of the callbacks' outbox (their
   * retries), then — on the trigger TURNLINE_RETENTION_CRON names, or every trigger without
   * it — one retention sweep over the bucket.
   */
  async scheduled(controller: { cron: string; scheduledTime: number }, env: unknown) {
    const entry = await isolate.app(env)
    await scheduledRun(entry, controller).finally(() => entry.deps.flushTelemetry?.())
  },
}

async function scheduledRun(entry: EntryApp, controller: { cron: string; scheduledTime: number }) {
  const { deps } = entry
  await scheduledWork(entry)
  const swept = await scheduledCallbacks(deps).catch((error: unknown) => error)
  const retentionCron = deps.config.TURNLINE_RETENTION_CRON
  if (retentionCron === undefined || retentionCron === controller.cron) {
    await scheduledRetention(deps, { now: controller.scheduledTime, cron: controller.cron })
  }
  if (swept !== undefined) throw swept
}
