import { Hono } from 'hono'
import { ErrorBodySchema } from '../../src/contract/error-responses.ts'
import { ExecExitCallbackSchema } from '../../src/contract/exec-exit-callback.ts'
import { SignedDeliveryHeadersSchema } from '../../src/contract/route-params.ts'
import { readExitCallback } from '../../src/contract/runner-callback.ts'
import { RunnerCallbackResponseSchema } from '../../src/contract/turn-responses.ts'
import type { ReplayGuard } from '../../src/ports/replay-guard.ts'
import type { AppEnv, RouteContext } from '../http/app-context.ts'
import { readBodyText } from '../http/read-body.ts'
import { documentedBody, documentedHeaders } from '../openapi/declared-input.ts'
import { errorAnswers, jsonAnswer, operation } from '../openapi/route-docs.ts'

/**
 * `POST /v1/runner/callback`: the sandbox runner's signed notice that a command exited (no
 * bearer key: the Standard Webhooks signature with the runner secret is the authentication). Unsigned,
 * expired or replayed → 401; malformed → 400; otherwise 202 `{resumed}` once the waiting turn
 * (if any) has been continued — or 429 when the tenant's limits refuse to continue it now (the
 * turn keeps waiting; the runner redelivers a 429). `replay` remembers accepted message ids: in
 * the coordinator, so a captured callback is refused on every instance and after a restart.
 */
export function runnerRoutes(
  ctx: RouteContext,
  secret: string | readonly string[],
  replay: ReplayGuard,
): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.post(
    '/runner/callback',
    operation({
      operationId: 'runnerCallback',
      tags: ['callbacks'],
      summary: "The sandbox runner's exit notice",
      description:
        "Signed with the runner secret (Standard Webhooks; no bearer key). Unsigned, expired or replayed → 401; malformed → 400; otherwise 202 once the turn waiting on the command (if any) has been continued. Continuing it is a turn step of the session's tenant: refused for its quota or turn slots it is 429 with Retry-After, the turn keeps waiting, and the runner's redelivery or the tenant's next turn without input continues it. Served only when the deployment has a runner secret.",
      security: [],
      responses: {
        202: jsonAnswer('Accepted.', RunnerCallbackResponseSchema),
        // Continuing the turn is admitted like any step of its tenant: 429 when refused.
        ...errorAnswers(400, 413, 429, 500, 503),
        401: jsonAnswer('`unauthorized`: unsigned, expired or replayed.', ErrorBodySchema),
      },
    }),
    documentedHeaders(SignedDeliveryHeadersSchema),
    documentedBody(ExecExitCallbackSchema, {
      required: true,
      examples: {
        exited: {
          summary: 'A command exited',
          value: {
            type: 'exec.exited',
            nonce: 'n0nce-n0nce-n0nce',
            tenant: 'local',
            session_id: 'sess_1',
            exec_session_id: 'run-0123abcd',
            request_id: 'req_0123456789',
            tool_call_id: 'call_1',
            exit_code: 0,
            total_output_bytes: 120,
            spool_path: '.vtcode/spool/run-0123abcd.log',
            spool_complete: true,
            exited_at: 1764750000000,
            attempt: 1,
          },
        },
      },
    }),
    async (c) => {
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
              ...(check.reason ? { details: { reason: check.reason } } : {}),
            },
          },
          check.status,
        )
      }
      return c.json(await ctx.api.runnerExited(check.callback), 202)
    },
  )
  return routes
}
