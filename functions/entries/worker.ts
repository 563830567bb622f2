import type { ExecutionContext } from 'hono'
import { approximateTokenizer } from '../../src/ports/tokenizer.ts'
import { createDeps } from '../deps.ts'
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

export default {
  fetch(
    request: Request,
    env: Readonly<Record<string, unknown>>,
    ctx: ExecutionContext,
  ): Response | Promise<Response> {
    handler ??= lazyApp(
      // The length heuristic: gpt-tokenizer's rank tables are aliased out of the bundle.
      () => createDeps(configOf(env), { tokenizer: async () => approximateTokenizer }),
      (line) => console.log(line),
    )
    return handler(request, env, ctx)
  },
}
