import { Hono } from 'hono'
import { readExitCallback } from '../../src/contract/runner-callback.ts'
import { MemoryReplayGuard } from '../../src/contract/runner-signature.ts'
import type { AppEnv, RouteContext } from '../http/app-context.ts'
import { readBodyText } from '../http/read-body.ts'

/**
 * `POST /v1/runner/callback`: the sandbox runner's signed notice that a command exited (no
 * bearer key: the HMAC signature with the runner secret is the authentication). Unsigned,
 * expired or replayed → 401; malformed → 400; otherwise 202 `{resumed}` once the waiting turn
 * (if any) has been continued.
 */
export function runnerRoutes(ctx: RouteContext, secret: string | readonly string[]): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const replay = new MemoryReplayGuard()
  routes.post('/runner/callback', async (c) => {
    const body = await readBodyText(c.req.raw, ctx.limits)
    const check = await readExitCallback({
      secret,
      body,
      headers: c.req.raw.headers,
      nowMs: Date.now(),
      replay,
    })
    if (!check.ok) {
      return c.json(
        {
          error: {
            code: check.status === 401 ? 'unauthorized' : 'invalid_input',
            message: check.message,
          },
        },
        check.status,
      )
    }
    return c.json(await ctx.api.runnerExited(check.callback), 202)
  })
  return routes
}
