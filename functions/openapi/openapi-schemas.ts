import * as z from 'zod'
import { TurnRequestSchema } from '../../src/contract/api.ts'
import { ResponsesRequestSchema } from '../../src/contract/open-responses-request.ts'
import { ExecRequestSchema } from '../../src/contract/route-bodies.ts'
import { SessionConfigSchema } from '../../src/contract/session-config.ts'
import { ThreadEventSchema } from '../../src/contract/thread-event.ts'
import { UsageSchema } from '../../src/contract/usage.ts'

/** Component schemas of the OpenAPI document: generated from zod where a schema exists. */

export type Json = Record<string, unknown>

export function schemaOf(schema: z.ZodType, io: 'input' | 'output' = 'input'): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json
  return rest
}

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
export const jsonContent = (schema: Json) => ({ 'application/json': { schema } })

const SUMMARY_FIELDS = [
  'session_id',
  'thread_id',
  'workspace',
  'status',
  'created_at',
  'updated_at',
  'turn_count',
  'event_count',
  'last_seq',
] as const

const summaryProperties = {
  session_id: { type: 'string' },
  thread_id: { type: 'string' },
  workspace: { type: 'string' },
  status: { enum: ['active', 'completed'] },
  created_at: { type: 'string', format: 'date-time' },
  updated_at: { type: 'string', format: 'date-time' },
  turn_count: { type: 'integer' },
  event_count: { type: 'integer' },
  last_seq: { type: 'integer' },
}

export function components(): Json {
  return {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    schemas: {
      Error: {
        type: 'object',
        required: ['error'],
        properties: {
          error: {
            type: 'object',
            required: ['code', 'message'],
            properties: {
              code: { type: 'string' },
              message: { type: 'string' },
              details: { type: 'object' },
            },
          },
        },
      },
      SessionConfig: schemaOf(SessionConfigSchema),
      ExecRequest: schemaOf(ExecRequestSchema),
      ResponsesRequest: schemaOf(ResponsesRequestSchema),
      TurnRequest: schemaOf(TurnRequestSchema),
      ThreadEvent: schemaOf(ThreadEventSchema, 'output'),
      Usage: schemaOf(UsageSchema, 'output'),
      CreateSessionResponse: {
        type: 'object',
        required: ['session_id', 'thread_id', 'status'],
        properties: {
          session_id: { type: 'string' },
          thread_id: { type: 'string' },
          status: { enum: ['active', 'completed'] },
        },
      },
      TurnResponse: {
        type: 'object',
        required: ['turn_id', 'status', 'events', 'next_seq'],
        properties: {
          turn_id: { type: 'string' },
          status: { enum: ['completed', 'failed', 'waiting', 'awaiting_approval', 'terminal'] },
          events: { type: 'array', items: ref('ThreadEvent') },
          next_seq: { type: 'integer', minimum: 0 },
          warnings: { type: 'array', items: { type: 'string' } },
        },
      },
      SessionSummary: {
        type: 'object',
        required: [...SUMMARY_FIELDS],
        properties: summaryProperties,
      },
      SessionView: {
        type: 'object',
        required: [...SUMMARY_FIELDS, 'num_turns', 'usage', 'config', 'budget'],
        properties: {
          ...summaryProperties,
          num_turns: { type: 'integer', description: 'model requests so far' },
          usage: ref('Usage'),
          reasoning_tokens: {
            type: 'integer',
            description:
              'reasoning tokens within usage.output_tokens, when the provider reported them',
          },
          total_cost_usd: { type: 'number' },
          model: { type: 'string', description: 'the model in force' },
          price: {
            type: 'object',
            description: 'USD per token the cost is estimated with; absent when unknown',
            properties: { input: { type: 'number' }, output: { type: 'number' } },
          },
          config: schemaOf(SessionConfigSchema, 'output'),
          budget: ref('BudgetReport'),
        },
      },
      SequencedEvent: {
        type: 'object',
        required: ['seq', 'schema_version', 'event'],
        properties: {
          seq: { type: 'integer', minimum: 0 },
          schema_version: { type: 'string', const: '0.11.0' },
          event: ref('ThreadEvent'),
        },
      },
    },
  }
}
