import { Hono } from 'hono'
import { WebhookAcceptedSchema } from '../../src/contract/background-responses.ts'
import { isTurnlineError, TurnlineError } from '../../src/contract/errors.ts'
import {
  SignedDeliveryHeadersSchema,
  WebhookParamsSchema,
  WebhookPayloadSchema,
} from '../../src/contract/route-params.ts'
import { verifyStandardWebhook } from '../../src/contract/standard-webhooks.ts'
import { leftOpenMessage, pausedTurn } from '../../src/contract/turn-left-open.ts'
import { WebhookRunResponseSchema } from '../../src/contract/turn-responses.ts'
import type { WebhookConfig } from '../../src/contract/webhook-config.ts'
import { type AppEnv, invocationTime, type RouteContext } from '../http/app-context.ts'
import { workStatusPath } from '../http/background-answer.ts'
import { turnResponseJson } from '../http/event-framing.ts'
import { jsonResponse } from '../http/json-response.ts'
import { readBodyText } from '../http/read-body.ts'
import { rememberUntilMs, type WebhookGuards, webhookFailures } from '../http/webhook-guards.ts'
import { documentedBody, documentedHeaders, pathParams } from '../openapi/declared-input.ts'
import { errorAnswers, jsonAnswer, operation } from '../openapi/route-docs.ts'

/** A signed route is not under the Host and Origin check: no 403 (functions/http/host-guard.ts). */
const { 403: _notChecked, ...SIGNED_ROUTE_ERRORS } = errorAnswers(
  401,
  404,
  409,
  413,
  422,
  429,
  500,
  502,
  503,
)

/**
 * `POST /v1/webhooks/:name`: a Standard Webhooks delivery (signed with the hook's secret, no
 * bearer key) starts an automation run: a session with the hook's settings and one turn whose
 * input is the hook's prompt with `{{body}}` replaced by the payload (literally). The session id
 * and the run's idempotency key derive from the delivery id, so redeliveries get the first run's
 * answer (`duplicate: true`); the run ends its thread, so retention can prune it.
 *
 * Where the server runs a background worker (Node, Deno), the delivery is answered 202
 * `{session_id, duplicate, work_id}` as soon as its session and its turn are recorded
 * (contract/work-record.ts), long before a sender gives up (GitHub waits 10 s), and the worker
 * runs it; a redelivery finds the session or the record and is `duplicate: true`, never a second
 * run. Elsewhere the first turn runs in the request and answers 200.
 *
 * Each accepted delivery id is claimed in the replay guard before its run is recorded, and marked
 * once its session stands (created, or found; before its turn is queued or run, so before the
 * turn can close it and retention prune it), for `idRetentionSeconds` (4 days by default) and at
 * least until its timestamp leaves the window. The id again — the same bytes, or signed anew by
 * its sender — once marked, is answered from its session, never creating it, so a replay after
 * the session was deleted or pruned is 409 instead of a second run. Claimed but not marked — the
 * first attempt died or failed before its session stood, or is still under way — it runs as a
 * first delivery would, idempotent on the delivery id (the session and the turn's key derive from
 * it: one run, whoever gets there first), unless its session was deleted since (409 again, from
 * the log's deleted-session marker, also when the deletion lands while the session is created
 * again: automation-run.ts). Failed signature checks are throttled (webhook-guards.ts).
 */
export function webhookRoutes(
  ctx: RouteContext,
  hooks: Readonly<Record<string, WebhookConfig>>,
  guards: WebhookGuards,
) {
  const routes = new Hono<AppEnv>()
  const failures = webhookFailures(guards)
  routes.post(
    '/webhooks/:name',
    operation({
      operationId: 'deliverWebhook',
      tags: ['callbacks'],
      summary: 'A webhook delivery starts an automation run',
      description:
        "Standard Webhooks signature with the hook's secret (no bearer key). Starts a session with the hook's settings and one turn whose input is the hook's prompt with `{{body}}` replaced by the payload. Redeliveries (same `webhook-id`, the same bytes or signed anew) get the first run's answer with `duplicate: true`, and 409 `conflict` once its session was deleted or pruned: a `webhook-id` runs once for as long as the deployment remembers it (`TURNLINE_WEBHOOK_ID_RETENTION_SECONDS`, 4 days by default). Where the server runs a background worker the delivery is answered 202 once recorded and runs in the background; elsewhere the turn runs in the request (200), and a turn that paused there (before the platform's timeout, or for the quota) is 409 `conflict` with `details.reason` `paused` and Retry-After: the next delivery of the same `webhook-id` continues it. Served only for the hooks the deployment configures.",
      security: [],
      responses: {
        200: jsonAnswer("The run's session and turn.", WebhookRunResponseSchema),
        202: jsonAnswer('The run is recorded; a worker runs it.', WebhookAcceptedSchema),
        ...SIGNED_ROUTE_ERRORS,
      },
    }),
    pathParams(WebhookParamsSchema),
    documentedHeaders(SignedDeliveryHeadersSchema),
    documentedBody(WebhookPayloadSchema, {
      required: true,
      examples: {
        push: { summary: 'A JSON payload', value: { ref: 'refs/heads/main', commits: 3 } },
      },
    }),
    async (c) => {
      const { name } = c.req.valid('param')
      const hook = Object.hasOwn(hooks, name) ? hooks[name] : undefined
      if (!hook) throw new TurnlineError('not_found', `no webhook named ${name.slice(0, 64)}`)
      const buckets = failures.admit(c.req.raw, c.env, name)
      const body = await readBodyText(c.req.raw, ctx.limits)
      const check = verifyStandardWebhook({ secret: hook.secret, headers: c.req.raw.headers, body })
      if (!check.ok) return failures.failed(buckets, check.reason)
      const input = renderPrompt(hook.prompt, body)
      if (input === '') throw emptyPrompt()
      const idDigest = await digest(check.id)
      const message = deliveryMessage(name, idDigest)
      const until = rememberUntilMs(check.timestamp, guards.idRetentionSeconds, Date.now())
      const earlier = await guards.replayGuard.claim(message, until)
      const request: WebhookRun = {
        sessionId: `wh-${name}-${idDigest}`,
        deliveryId: check.id,
        config: hook.session,
        input,
        ...(earlier === 'first' ? {} : { earlier }),
        ...(earlier === 'recorded'
          ? {}
          : { sessionStands: () => guards.replayGuard.recorded(message, until) }),
      }
      let answer: Response
      try {
        answer = await run(hook, request, c.env)
      } catch (error) {
        if (earlier === 'first' || !isTurnlineError(error, 'not_found')) throw error
        throw new TurnlineError(
          'conflict',
          'this signed delivery was accepted already and its session is gone; it does not run again',
          { retryable: false },
        )
      }
      return answer
    },
  )
  return routes

  /**
   * The delivery's run: recorded for the worker (202) where there is one, else run now (200). A
   * turn run now that paused (before the platform's timeout on Lambda, or for the quota) is not
   * done: the answer is 409 `conflict`, retryable, so the sender delivers it again, and that
   * delivery continues the turn where it stopped (automation-run.ts), once.
   */
  async function run(hook: WebhookConfig, request: WebhookRun, env: unknown) {
    if (ctx.background) {
      const queued = await ctx.api.queueTrigger(hook.tenant, request)
      const { session_id, work_id } = queued
      await ctx.background.wake({ tenant: hook.tenant, session_id, work_id })
      const answer = { session_id, duplicate: queued.duplicate, work_id }
      return jsonResponse(JSON.stringify(answer), 202, {
        location: workStatusPath(session_id, work_id),
      })
    }
    const ran = await ctx.api.trigger(hook.tenant, { ...request, ...invocationTime(ctx, env) })
    if (pausedTurn(ran.turn)) throw pausedDelivery(ran.session_id, ran.turn.warnings ?? [])
    const text = `{"session_id":${JSON.stringify(ran.session_id)},"duplicate":${ran.duplicate},"turn":${turnResponseJson(ran.turn)}}`
    return jsonResponse(text)
  }
}

/**
 * The hook's prompt with every `{{body}}` replaced by the payload, literally: a replacer
 * function, because a replacement string would expand `$'`, `$&`, `` $` `` and `$$` found in
 * the payload into parts of the template.
 */
export function renderPrompt(template: string, body: string): string {
  return template.replaceAll('{{body}}', () => body)
}

/** What the replay guard remembers of a delivery: its hook and the digest of its id. */
export function deliveryMessage(hook: string, idDigest: string): string {
  return `${hook}:${idDigest}`
}

async function digest(text: string): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)))
  return Array.from(hash.slice(0, 12), (b) => b.toString(16).padStart(2, '0')).join('')
}

type WebhookRun = Parameters<RouteContext['api']['queueTrigger']>[1]

/**
 * A delivery whose prompt is empty (the hook's prompt is `{{body}}`, the body empty) has no turn
 * to run: refused before anything is recorded, as a turn without input is.
 */
function emptyPrompt(): TurnlineError {
  return new TurnlineError(
    'invalid_input',
    "the delivery's prompt is empty: the hook's prompt is the body, and the body is empty",
    { details: { field: 'body' } },
  )
}

/** The answer to a delivery whose turn paused: deliver it again to continue it. */
function pausedDelivery(sessionId: string, warnings: string[]): TurnlineError {
  return new TurnlineError(
    'conflict',
    `${leftOpenMessage(sessionId, { status: 'waiting', warnings })}; or deliver the same webhook-id again, which continues it`,
    { retryable: true, retryAfter: 1, details: { reason: 'paused', session_id: sessionId } },
  )
}
