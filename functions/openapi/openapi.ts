import { EventsQuerySchema, ListSessionsQuerySchema } from '../../src/contract/api.ts'
import { agentPaths, agentSchemas } from './openapi-agents.ts'
import { loopPaths, loopSchemas } from './openapi-loops.ts'
import { errorResponses, idParameter, queryParameters } from './openapi-parameters.ts'
import { responsesPaths } from './openapi-responses.ts'
import { components, type Json, jsonContent, ref, schemaOf } from './openapi-schemas.ts'
import { steeringPaths } from './openapi-steering.ts'
import { usagePaths } from './openapi-usage.ts'

/**
 * The OpenAPI 3.1 document of the v1 API. Request bodies, query parameters and the event
 * schema are generated from the zod schemas the routes validate with; responses are described
 * by hand (they are TypeScript interfaces).
 */

const turnStream = {
  'application/json': { schema: ref('TurnResponse') },
  'text/event-stream': {
    schema: { type: 'string' },
    description:
      'With Accept: text/event-stream. One frame per event (`id:` = seq, `event:` = event type, `data:` = bare ThreadEvent), then `event: turn.result` with the TurnResponse. A failure after the stream started is an `event: error` frame with the error body.',
  },
}

const turnOperation = (summary: string, body: Json | undefined): Json => ({
  summary,
  parameters: [idParameter],
  ...(body ? { requestBody: { required: false, content: jsonContent(body) } } : {}),
  responses: {
    '200': { description: 'the outcome of the turn', content: turnStream },
    ...errorResponses(400, 401, 404, 409, 413, 422, 429, 500, 502, 503),
  },
})

function paths(): Json {
  return {
    '/v1/sessions': {
      post: {
        summary: 'Create a session (commits thread.started)',
        requestBody: { required: false, content: jsonContent(ref('SessionConfig')) },
        responses: {
          '201': { description: 'created', content: jsonContent(ref('CreateSessionResponse')) },
          ...errorResponses(400, 401, 413, 500, 503),
        },
      },
      get: {
        summary: "List the tenant's sessions of one workspace",
        parameters: queryParameters(ListSessionsQuerySchema),
        responses: {
          '200': {
            description: 'one page; pass the opaque `cursor` back to get the next (400 if forged)',
            content: jsonContent({
              type: 'object',
              required: ['sessions'],
              properties: {
                sessions: { type: 'array', items: ref('SessionSummary') },
                cursor: { type: 'string' },
              },
            }),
          },
          ...errorResponses(400, 401, 500, 503),
        },
      },
    },
    '/v1/sessions/{id}': {
      get: {
        summary: 'One session with its manifest summary and config',
        parameters: [idParameter],
        responses: {
          '200': { description: 'the session', content: jsonContent(ref('SessionView')) },
          ...errorResponses(400, 401, 404, 500, 503),
        },
      },
    },
    '/v1/sessions/{id}/turns': {
      post: {
        ...turnOperation('Step one turn', ref('TurnRequest')),
        parameters: [
          idParameter,
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,200}$' },
            description:
              'Scoped to the session. A retry with the same key and body returns the first ' +
              'outcome; the key with another body is 422 idempotency_key_reused.',
          },
        ],
      },
    },
    '/v1/sessions/{id}/complete': {
      post: turnOperation('End the session with success', {
        type: 'object',
        additionalProperties: false,
      }),
    },
    '/v1/sessions/{id}/cancel': {
      post: turnOperation('End the session as cancelled', {
        type: 'object',
        additionalProperties: false,
      }),
    },
    '/v1/sessions/{id}/compact': {
      post: {
        summary: 'Compact the transcript now (trigger manual, always summarizes)',
        parameters: [
          idParameter,
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,200}$' },
            description:
              'Scoped to the session. A retry with the same key and body returns the first ' +
              'outcome; the key with another body is 422 idempotency_key_reused.',
          },
        ],
        requestBody: {
          required: false,
          content: jsonContent({
            type: 'object',
            additionalProperties: false,
            properties: {
              instructions: {
                type: 'string',
                minLength: 1,
                maxLength: 20_000,
                description: 'Replaces the default summary instruction.',
              },
            },
          }),
        },
        responses: {
          '200': {
            description: 'status completed; events: the thread.compact_boundary',
            content: jsonContent(ref('TurnResponse')),
          },
          ...errorResponses(400, 401, 404, 409, 413, 422, 500, 502, 503),
        },
      },
    },
    ...steeringPaths(),
    ...agentPaths(),
    ...loopPaths(),
    ...usagePaths(),
    '/v1/sessions/{id}/events': {
      get: {
        summary: 'Events with seq > after; follow=1 keeps the stream open until thread.completed',
        parameters: [
          idParameter,
          ...queryParameters(EventsQuerySchema),
          {
            name: 'Last-Event-ID',
            in: 'header',
            required: false,
            schema: { type: 'string', pattern: '^\\d+$' },
            description: 'SSE resume: replaces `after`.',
          },
        ],
        responses: {
          '200': {
            description: 'header Turnline-Next-Seq: the seq after the first page',
            content: {
              'application/x-ndjson': {
                schema: ref('SequencedEvent'),
                description: 'one SequencedEvent per line (the default)',
              },
              'text/event-stream': {
                schema: { type: 'string' },
                description: '`id:` = seq, `event:` = event type, `data:` = bare ThreadEvent',
              },
            },
          },
          ...errorResponses(400, 401, 404, 500, 503),
        },
      },
    },
    '/v1/exec': {
      post: {
        summary: 'Exec mode: create, run one turn with the prompt, complete',
        requestBody: { required: true, content: jsonContent(ref('ExecRequest')) },
        responses: {
          '200': {
            description: 'bare ThreadEvent lines as they happen, ending with thread.completed',
            content: { 'application/x-ndjson': { schema: ref('ThreadEvent') } },
          },
          ...errorResponses(400, 401, 413, 422, 500, 502, 503),
        },
      },
    },
    ...responsesPaths(),
    '/v1/openapi.json': {
      get: {
        summary: 'This document',
        security: [],
        responses: { '200': { description: 'OpenAPI 3.1' } },
      },
    },
    '/docs': {
      get: {
        summary: 'Human-readable route list',
        security: [],
        responses: { '200': { description: 'HTML' } },
      },
    },
    '/ui': {
      get: {
        summary: 'Session timeline viewer (HTML; its API calls carry the bearer key)',
        security: [],
        responses: { '200': { description: 'HTML' } },
      },
    },
    '/healthz': {
      get: {
        summary: 'Liveness',
        security: [],
        responses: { '200': { description: '{"status":"ok"}' } },
      },
    },
  }
}

let cached: string | undefined

/** The document as JSON text (built once per process). */
export function openApiJson(version: string): string {
  cached ??= JSON.stringify({
    openapi: '3.1.0',
    info: {
      title: 'Turnline',
      version,
      description:
        'The VT Code agent-loop contract (event schema 0.11.0) over HTTP: one turn per call. Errors are {"error":{"code","message","details?"}}.',
    },
    security: [{ bearer: [] }],
    paths: paths(),
    components: withAgentSchemas(components()),
  })
  return cached
}

/** The shared components plus the agent layer's schemas. */
function withAgentSchemas(shared: Json): Json {
  const schemas = (shared.schemas ?? {}) as Json
  return { ...shared, schemas: { ...schemas, ...agentSchemas(), ...loopSchemas() } }
}
