import { ResponseReadQuerySchema } from '../../src/contract/open-responses-request.ts'
import { errorResponses, queryParameters } from './openapi-parameters.ts'
import { type Json, jsonContent, ref } from './openapi-schemas.ts'

const STREAM =
  '`event: <type>`, `data: <event JSON with sequence_number>` per Open Responses event (schema ' +
  'version 2026-04-24; VT Code-only items and events carry the `vtcode:` prefix), then `data: [DONE]`.'

/** The response resource: every field the Open Responses schema requires. */
const responseResource: Json = {
  type: 'object',
  required: ['id', 'object', 'created_at', 'completed_at', 'status', 'model', 'output', 'usage'],
  description:
    'Open Responses ResponseResource (https://www.openresponses.org/reference), all required fields present',
}

/** `POST /v1/responses` and `GET /v1/responses/{id}`. */
export function responsesPaths(): Json {
  return {
    '/v1/responses': {
      post: {
        summary: 'Open Responses-compatible: one exec session bridged to Open Responses events',
        requestBody: { required: true, content: jsonContent(ref('ResponsesRequest')) },
        responses: {
          '200': {
            description: 'the response resource, or with stream: true the bridged event stream',
            content: {
              'application/json': { schema: responseResource },
              'text/event-stream': {
                schema: { type: 'string' },
                description: `With stream: true or Accept: text/event-stream. ${STREAM}`,
              },
            },
          },
          ...errorResponses(400, 401, 413, 422, 500, 502, 503),
        },
      },
    },
    '/v1/responses/{id}': {
      get: {
        summary: 'A response rebuilt from its session; with stream=true its stream (resume)',
        parameters: [
          {
            name: 'id',
            in: 'path',
            required: true,
            schema: { type: 'string', pattern: '^resp_[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$' },
          },
          ...queryParameters(ResponseReadQuerySchema),
        ],
        responses: {
          '200': {
            description: 'the response resource, or the stream from starting_after',
            content: {
              'application/json': { schema: responseResource },
              'text/event-stream': {
                schema: { type: 'string' },
                description: `With stream=true or Accept: text/event-stream: events with a sequence_number above starting_after. ${STREAM} A response still running is followed until it completes.`,
              },
            },
          },
          ...errorResponses(400, 401, 404, 500, 503),
        },
      },
    },
  }
}
