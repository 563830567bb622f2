import { IntentRequestSchema } from '../../src/contract/api.ts'
import { PermissionResolutionRequestSchema } from '../../src/contract/permission-resolution.ts'
import { PlanApprovalRequestSchema } from '../../src/contract/plan-approval.ts'
import { errorResponses, idParameter } from './openapi-parameters.ts'
import { type Json, jsonContent, ref, schemaOf } from './openapi-schemas.ts'

const post = (
  summary: string,
  body: Json | undefined,
  status: string,
  description: string,
  answer: Json,
) => ({
  post: {
    summary,
    parameters: [idParameter],
    ...(body ? { requestBody: { required: true, content: jsonContent(body) } } : {}),
    responses: {
      [status]: { description, content: jsonContent(answer) },
      ...errorResponses(400, 401, 404, 409, 413, 500, 502, 503),
    },
  },
})

/** Steering, approvals, plan handoff, fork and the runner callback. */
export function steeringPaths(): Json {
  return {
    '/v1/sessions/{id}/intents': post(
      'Queue a steering follow-up for the next turn boundary (at most 16 pending)',
      schemaOf(IntentRequestSchema),
      '202',
      '{id, pending}',
      { type: 'object', properties: { id: { type: 'string' }, pending: { type: 'integer' } } },
    ),
    '/v1/sessions/{id}/permissions': post(
      'Answer a tool call waiting for approval; the next turn without input continues the loop',
      schemaOf(PermissionResolutionRequestSchema),
      '200',
      'status waiting; events: permission.resolved',
      ref('TurnResponse'),
    ),
    '/v1/sessions/{id}/plan-approval': post(
      'Answer a plan waiting for approval; executing decisions run the build turn',
      schemaOf(PlanApprovalRequestSchema),
      '200',
      'the turn the decision started (or recorded)',
      ref('TurnResponse'),
    ),
    '/v1/sessions/{id}/fork': post(
      'Fork: a new session seeded with the summarized history; the source is untouched',
      undefined,
      '201',
      '{session_id, thread_id, status, forked_from}',
      { type: 'object' },
    ),
    '/v1/webhooks/{name}': {
      post: {
        summary: 'A Standard Webhooks delivery starts an automation run (signature, no bearer key)',
        security: [],
        parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': { description: '{session_id, duplicate, turn}' },
          '401': { description: 'bad, missing or stale signature' },
          '404': { description: 'no such webhook' },
        },
      },
    },
    '/v1/runner/callback': {
      post: {
        summary: "The sandbox runner's signed exit notice (HMAC, no bearer key)",
        security: [],
        responses: {
          '202': { description: '{resumed, status?}' },
          '401': { description: 'unsigned, expired or replayed' },
          '400': { description: 'malformed notice' },
        },
      },
    },
  }
}
