import type { ExecutionContext } from 'hono'
import { approximateTokenizer } from '../../src/ports/tokenizer.ts'
import { sweepRetention } from '../../src/store/retention-sweep.ts'
import { createDeps, type Deps } from '../deps.ts'
import { lazyApp } from './serve-app.ts'

/**
 * Cloudflare Workers entry. Deps are built from the bindings on the isolate's first request and
 * reused. Only text bindings (vars and secrets) are configuration. A Worker has no filesystem:
 * without S3_BUCKET (and without an explicit TURNLINE_STORE) sessions live in the isolate's
 * memory, which suits `wrangler dev` and nothing else.
 */
function configOf(bindings: Readonly<Record<string, unknown>>): Record<string, string> {
  const vars: Record<string, string> = {}
  for (const [name, value] of Object.entries(bindings)) {
    if (typeof value === 'string') vars[name] = value
  }
  const chosen = (name: string) => (vars[name] ?? '').trim() !== ''
  if (!chosen('S3_BUCKET') && !chosen('TURNLINE_STORE')) vars.TURNLINE_STORE = 'memory'
  return vars
}

let handler: ReturnType<typeof lazyApp> | undefined
let deps: Promise<Deps> | undefined

/** One set of deps per isolate, shared by requests and scheduled runs. */
function depsOf(env: Readonly<Record<string, unknown>>): Promise<Deps> {
  // The length heuristic: gpt-tokenizer's rank tables are aliased out of the bundle.
  deps ??= createDeps(configOf(env), { tokenizer: async () => approximateTokenizer })
  return deps
}

/** The part of a Workers ScheduledController this entry reads. */
interface ScheduledController {
  cron: string
  scheduledTime: number
}

export default {
  fetch(
    request: Request,
    env: Readonly<Record<string, unknown>>,
    ctx: ExecutionContext,
  ): Response | Promise<Response> {
    handler ??= lazyApp(
      () => depsOf(env),
      (line) => console.log(line),
    )
    return handler(request, env, ctx)
  },

  /**
   * Cron trigger (wrangler.toml `[triggers] crons`): VT Code's retention policy over every
   * workspace of every tenant. Isolates are short-lived, so the every-25th-creation pass of a
   * long-running server would almost never run here.
   */
  async scheduled(
    controller: ScheduledController,
    env: Readonly<Record<string, unknown>>,
  ): Promise<void> {
    const { service } = await depsOf(env)
    const result = await sweepRetention(service.sessions.objects, {
      now: controller.scheduledTime,
    })
    const deleted = result.deleted.reduce((n, d) => n + d.sessions.length, 0)
    console.log(
      JSON.stringify({
        msg: 'retention sweep',
        cron: controller.cron,
        workspaces: result.workspaces,
        deleted,
        failed: result.failed,
      }),
    )
    if (result.failed.length > 0) {
      throw new Error(`retention: ${result.failed.length} workspace(s) failed (see the log line)`)
    }
  },
}
