import { Hono } from 'hono'
import { TurnlineError } from '../../src/contract/errors.ts'
import { verifyStandardWebhook } from '../../src/contract/standard-webhooks.ts'
import type { WebhookConfig } from '../../src/contract/webhook-config.ts'
import type { AppEnv, RouteContext } from '../http/app-context.ts'
import { JSON_TYPE, turnResponseJson } from '../http/event-framing.ts'
import { readBodyText } from '../http/read-body.ts'

/**
 * `POST /v1/webhooks/:name`: a Standard Webhooks delivery (signed with the hook's secret, no
 * bearer key) starts an automation run: a session with the hook's settings and one turn whose
 * input is the hook's prompt with `{{body}}` replaced by the payload. The session id derives
 * from the delivery id, so redeliveries get the first run's answer (`duplicate: true`).
 */
export function webhookRoutes(ctx: RouteContext, hooks: Readonly<Record<string, WebhookConfig>>) {
  const routes = new Hono<AppEnv>()
  routes.post('/webhooks/:name', async (c) => {
    const name = c.req.param('name')
    const hook = Object.hasOwn(hooks, name) ? hooks[name] : undefined
    if (!hook) throw new TurnlineError('not_found', `no webhook named ${name.slice(0, 64)}`)
    const body = await readBodyText(c.req.raw, ctx.limits)
    const check = verifyStandardWebhook({ secret: hook.secret, headers: c.req.raw.headers, body })
    if (!check.ok) throw new TurnlineError('unauthorized', `webhook rejected: ${check.reason}`)
    const run = await ctx.api.trigger(hook.tenant, {
      sessionId: `wh-${name}-${await digest(check.id)}`,
      config: hook.session,
      input: hook.prompt.replaceAll('{{body}}', body),
    })
    const text = `{"session_id":${JSON.stringify(run.session_id)},"duplicate":${run.duplicate},"turn":${turnResponseJson(run.turn)}}`
    return new Response(text, { status: 200, headers: { 'content-type': JSON_TYPE } })
  })
  return routes
}

async function digest(text: string): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)))
  return Array.from(hash.slice(0, 12), (b) => b.toString(16).padStart(2, '0')).join('')
}
