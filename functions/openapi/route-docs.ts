import type { MiddlewareHandler } from 'hono'
import { type DescribeRouteOptions, describeRoute } from 'hono-openapi'
import type * as z from 'zod'
import {
  ErrorBodySchema,
  OpenResponsesErrorBodySchema,
} from '../../src/contract/error-responses.ts'
import type { AppEnv } from '../http/app-context.ts'
import { schemaResolver } from './schema-resolver.ts'

/**
 * The response half and the description of a route declaration (see declared-input.ts for the
 * request half). `operation` goes into the route's middleware list; hono-openapi collects it.
 */

export type Tag = (typeof TAGS)[number]['name']

export const TAGS = [
  { name: 'sessions', description: 'Create, list and read sessions; the events feed.' },
  { name: 'turns', description: 'Step a session: turns, completion, cancellation, compaction.' },
  {
    name: 'steering',
    description: 'Steering follow-ups, permission answers, plan approval, forks.',
  },
  { name: 'exec', description: 'One-shot runs: exec mode and the Open Responses endpoint.' },
  { name: 'agents', description: 'The agent layer: orientation, handoff, verification.' },
  { name: 'artifacts', description: "A workspace's durable artifacts in `.vtcode/`." },
  { name: 'loops', description: 'Loop runs: steps of fresh sessions within a budget.' },
  { name: 'callbacks', description: 'Signed deliveries: webhooks and the sandbox runner.' },
  { name: 'meta', description: 'Health, this document and its reference page.' },
  { name: 'viewer', description: 'The session timeline viewer (HTML) and its assets.' },
] as const

export interface Operation {
  operationId: string
  tags: Tag[]
  summary: string
  description: string
  responses: DescribeRouteOptions['responses']
  /** Public routes: `[]` (no bearer key); others use the document's default. */
  security?: []
  /** Served but left out of the document (a redirect to a canonical path). */
  hide?: true
}

export function operation(spec: Operation): MiddlewareHandler<AppEnv> {
  return describeRoute({ ...spec, tags: [...spec.tags] })
}

/** `schema` as the document shows an answer: its output side. */
export const answerSchema = (schema: z.ZodType) => schemaResolver(schema, 'output')

/** A JSON answer by `schema` (as the service builds it). */
export function jsonAnswer(description: string, schema: z.ZodType, headers?: Headers_) {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: { 'application/json': { schema: answerSchema(schema) } },
  }
}

type Headers_ = Record<string, { description: string; schema: { type: 'string' | 'integer' } }>

/** A stream answer: `text/event-stream` or `application/x-ndjson` frames, described. */
export function streamContent(description: string, example: string) {
  return { schema: { type: 'string' as const, description }, example }
}

const ERROR_TEXT: Record<number, string> = {
  400: '`invalid_input`: the message and `details` name the offending field.',
  401: '`unauthorized`: missing or wrong credentials.',
  403: '`forbidden`: a deployment without keys answers only requests addressed to this machine (a loopback `Host`, or one in TURNLINE_ALLOWED_HOSTS) and not sent by another site (`Origin`).',
  404: '`not_found`: no such resource for this tenant.',
  409: '`session_busy` (with Retry-After), `session_completed`, `follow_up_queue_full` or `conflict` (`details.reason: "scheduled_loops"` when a new scheduled loop would pass the tenant\'s TURNLINE_MAX_SCHEDULED_LOOPS).',
  413: "`payload_too_large`: the body exceeds the limit (`details.max_bytes`), or a text of a turn input over the inline limit is more than an artifact may keep (`details.limit`: `TURNLINE_TOOL_MAX_OUTPUT_BYTES`, or `TURNLINE_TOOL_MAX_SESSION_OUTPUT_BYTES` for what the session has left; the tenant's `output_bytes_per_output` or `output_bytes_per_session` where lower).",
  416: '`invalid_input`: the byte range starts past the end (`Content-Range: bytes */<size>`).',
  422: '`model_not_configured`, or `idempotency_key_reused`: the key was used with another request.',
  429: '`rate_limited`, `too_many_concurrent_turns` or `quota_exceeded`, with Retry-After: a per-tenant limit of the deployment (docs/configuration.md#tenancy; `details.quota: "output_bytes"` when a long input text would pass the tenant\'s daily `output_bytes_per_day`), or `rate_limited` with `details.reason: "authentication_failures"`: too many failed authentications from this client or with this key prefix, or `details.reason: "pending_work"`: the tenant has TURNLINE_MAX_PENDING_WORK background records pending, so no more is recorded until some have run.',
  500: 'An internal fault (`internal`, `corrupt_data`, …); the server log has the details.',
  502: '`model_error` or `tool_error`: an upstream failed.',
  503: 'Storage, coordinator or runner unavailable; retry later (Retry-After when known).',
}

/** The request-window headers a tenant with a request limit gets on every answer. */
export const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': {
    description: "The tenant's requests per minute (only when it has a request limit).",
    schema: { type: 'integer' as const },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the sliding one-minute window.',
    schema: { type: 'integer' as const },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the current window ends.',
    schema: { type: 'integer' as const },
  },
}

/**
 * The error answers of an operation, all with the one error body. A route that answers 401
 * authenticates a tenant, so the tenant's limits and the throttle of failed authentications
 * apply to it (429), and without keys the Host and Origin check (403): both are added.
 */
export function errorAnswers(...statuses: number[]) {
  return errorAnswersWith(ErrorBodySchema, statuses)
}

/** The same, in the Open Responses envelope (the `/v1/responses` routes). */
export function openResponsesErrorAnswers(...statuses: number[]) {
  return errorAnswersWith(OpenResponsesErrorBodySchema, statuses)
}

function errorAnswersWith(schema: z.ZodType, statuses: number[]) {
  const added = statuses.includes(401) ? [403, 429] : []
  const all = [...new Set([...statuses, ...added])]
  return Object.fromEntries(
    all
      .sort((a, b) => a - b)
      .map((status) => [String(status), jsonAnswer(ERROR_TEXT[status] ?? 'An error.', schema)]),
  )
}
