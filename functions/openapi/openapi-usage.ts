import { UsageReportSchema } from '../../src/contract/tenancy.ts'
import { errorResponses } from './openapi-parameters.ts'
import { type Json, jsonContent, schemaOf } from './openapi-schemas.ts'

const RATE_LIMIT_HEADERS: Json = {
  'RateLimit-Limit': {
    description: "The tenant's requests per minute (only when it has a request limit)",
    schema: { type: 'integer' },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the sliding one-minute window',
    schema: { type: 'integer' },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the current window ends',
    schema: { type: 'integer' },
  },
}

/** `GET /v1/usage`: the calling tenant's usage and limits (docs/configuration.md#tenancy). */
export function usagePaths(): Json {
  return {
    '/v1/usage': {
      get: {
        summary:
          "The calling tenant's usage today (UTC): requests, running turns, model tokens and cost, each against its limit (null: none)",
        responses: {
          '200': {
            description: 'the usage report',
            headers: RATE_LIMIT_HEADERS,
            content: jsonContent(schemaOf(UsageReportSchema, 'output')),
          },
          ...errorResponses(400, 401, 429, 500, 503),
        },
      },
    },
  }
}
