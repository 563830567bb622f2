import {
  LoopCreateRequestSchema,
  LoopRunStateSchema,
  LoopStepRecordSchema,
  LoopStepRequestSchema,
} from '../../src/contract/loop-state.ts'
import { errorResponses } from './openapi-parameters.ts'
import { type Json, jsonContent, ref, schemaOf } from './openapi-schemas.ts'

/** Paths and schemas of loop runs. */

const loopId = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$' },
}

export function loopPaths(): Json {
  return {
    '/v1/loops': {
      post: {
        summary:
          'Create a loop run: a task, the settings of each step session, a budget (VT Code CostBudget defaults)',
        requestBody: { required: true, content: jsonContent(schemaOf(LoopCreateRequestSchema)) },
        responses: {
          '201': { description: 'the loop', content: jsonContent(ref('LoopView')) },
          ...errorResponses(400, 401, 409, 413, 500, 503),
        },
      },
    },
    '/v1/loops/{id}': {
      get: {
        summary: 'A loop run: step index, cumulative tokens and cost, status, budget report',
        parameters: [loopId],
        responses: {
          '200': { description: 'the loop', content: jsonContent(ref('LoopView')) },
          ...errorResponses(400, 401, 404, 500, 503),
        },
      },
    },
    '/v1/loops/{id}/step': {
      post: {
        summary:
          'Run (or resume) the next step — a fresh session oriented from the artifacts — or pause, resume, complete, fail the loop, or change its budget',
        parameters: [loopId],
        requestBody: { required: false, content: jsonContent(schemaOf(LoopStepRequestSchema)) },
        responses: {
          '200': {
            description: '{loop, step?, waiting?}',
            content: jsonContent({
              type: 'object',
              required: ['loop'],
              properties: {
                loop: ref('LoopView'),
                step: schemaOf(LoopStepRecordSchema, 'output'),
                waiting: {
                  type: 'object',
                  properties: { session_id: { type: 'string' }, status: { type: 'string' } },
                },
              },
            }),
          },
          ...errorResponses(400, 401, 404, 409, 413, 422, 500, 502, 503),
        },
      },
    },
  }
}

export function loopSchemas(): Json {
  const state = schemaOf(LoopRunStateSchema, 'output') as { properties?: Json }
  return {
    LoopView: {
      ...state,
      properties: { ...state.properties, budget_report: ref('BudgetReport') },
    },
  }
}
