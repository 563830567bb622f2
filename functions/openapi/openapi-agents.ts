import {
  ARTIFACT_KINDS,
  DocumentBodySchema,
  MemoryAppendSchema,
} from '../../src/contract/artifacts.ts'
import { BUDGET_STATUSES } from '../../src/contract/budget-status.ts'
import { HandoffRequestSchema } from '../../src/contract/handoff.ts'
import { HandoffRouteRequestSchema } from '../../src/contract/handoff-request.ts'
import { ProgressUpdateSchema } from '../../src/contract/progress-ledger.ts'
import { errorResponses, idParameter } from './openapi-parameters.ts'
import { type Json, jsonContent, ref, schemaOf } from './openapi-schemas.ts'

/** Paths and schemas of the agent layer: artifacts, orientation, handoff, verification, loops. */

const workspaceParameter = {
  name: 'workspace',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$' },
}
const kindParameter = {
  name: 'kind',
  in: 'path',
  required: true,
  schema: { type: 'string', enum: [...ARTIFACT_KINDS] },
}

export function agentPaths(): Json {
  return {
    '/v1/sessions/{id}/handoff': {
      post: {
        summary:
          "The session's HandoffRequest (state, boundary status, modified files, last test run, open decisions, known issues, next actions, task), stored as the workspace's current handoff; start: true starts the next agent's session with it, end_source: true ends this one handed_off",
        parameters: [
          idParameter,
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,200}$' },
            description: 'A retry with the same key answers the session the first call started.',
          },
        ],
        requestBody: { required: false, content: jsonContent(schemaOf(HandoffRouteRequestSchema)) },
        responses: {
          '201': {
            description: 'a next session was started',
            content: jsonContent(ref('HandoffResponse')),
          },
          '200': {
            description: 'the handoff (no new session)',
            content: jsonContent(ref('HandoffResponse')),
          },
          ...errorResponses(400, 401, 404, 409, 413, 500, 503),
        },
      },
    },
    '/v1/sessions/{id}/orientation': {
      get: {
        summary:
          'The [Orientation Context] frozen into the current request segment; ?preview=1 also builds the one a new orient phase would freeze now',
        parameters: [
          idParameter,
          {
            name: 'preview',
            in: 'query',
            required: false,
            schema: { enum: ['0', '1', 'true', 'false'] },
          },
        ],
        responses: {
          '200': {
            description: '{session_id, orientation, pending?, preview?, warnings?}',
            content: jsonContent(ref('OrientationView')),
          },
          ...errorResponses(400, 401, 404, 500, 503),
        },
      },
    },
    '/v1/workspaces/{workspace}/artifacts': {
      get: {
        summary:
          "The workspace's durable artifacts: each kind, its .vtcode/ path, whether it exists",
        parameters: [workspaceParameter],
        responses: {
          '200': {
            description: '{workspace, artifacts:[{kind, path, exists, size?}]}',
            content: jsonContent({
              type: 'object',
              properties: {
                workspace: { type: 'string' },
                artifacts: { type: 'array', items: ref('ArtifactEntry') },
              },
            }),
          },
          ...errorResponses(400, 401, 500, 503),
        },
      },
    },
    '/v1/workspaces/{workspace}/artifacts/{kind}': {
      get: {
        summary: 'One artifact: raw content, parsed value, summary and etag',
        parameters: [workspaceParameter, kindParameter],
        responses: {
          '200': { description: 'the artifact', content: jsonContent(ref('ArtifactView')) },
          ...errorResponses(400, 401, 404, 500, 503),
        },
      },
      put: {
        summary:
          'Replace a document ({content}) or the handoff (a HandoffRequest), or update the progress ledger (fields given replace, others kept); notes, decisions and context_reset are 409',
        parameters: [
          workspaceParameter,
          kindParameter,
          {
            name: 'If-Match',
            in: 'header',
            required: false,
            schema: { type: 'string' },
            description: 'The etag of a read: replace only that version (else 409).',
          },
        ],
        requestBody: {
          required: true,
          content: jsonContent({
            oneOf: [
              schemaOf(DocumentBodySchema),
              schemaOf(ProgressUpdateSchema),
              schemaOf(HandoffRequestSchema),
            ],
          }),
        },
        responses: {
          '200': {
            description: 'the artifact as written',
            content: jsonContent(ref('ArtifactView')),
          },
          ...errorResponses(400, 401, 409, 413, 500, 503),
        },
      },
      post: {
        summary: 'Append one entry to notes or decisions (append-only loop memory)',
        parameters: [workspaceParameter, kindParameter],
        requestBody: { required: true, content: jsonContent(schemaOf(MemoryAppendSchema)) },
        responses: {
          '201': {
            description: 'the file after the append',
            content: jsonContent(ref('ArtifactView')),
          },
          ...errorResponses(400, 401, 409, 413, 500, 503),
        },
      },
      delete: {
        summary: 'Delete an artifact (deleting a missing one is not an error)',
        parameters: [workspaceParameter, kindParameter],
        responses: { '204': { description: 'deleted' }, ...errorResponses(400, 401, 500, 503) },
      },
    },
  }
}

const frozenOrientation = {
  type: 'object',
  required: ['text', 'digest', 'tokens', 'budget', 'reason', 'built_at', 'sections'],
  properties: {
    text: { type: 'string' },
    digest: { type: 'string', description: 'hash16 of text; part of the prefix hash' },
    tokens: { type: 'integer' },
    budget: { type: 'integer' },
    reason: { enum: ['session_start', 'fork', 'handoff', 'context_reset', 'plan_handoff'] },
    built_at: { type: 'string', format: 'date-time' },
    sections: { type: 'array', items: { type: 'string' } },
    trimmed: { type: 'array', items: { type: 'string' } },
  },
}

const limit = (used: string) => ({
  type: 'object',
  properties: { [used]: { type: 'number' }, max: { type: 'number' } },
})

export function agentSchemas(): Json {
  return {
    BudgetReport: {
      type: 'object',
      required: ['status', 'steps', 'tokens', 'cost_usd'],
      properties: {
        status: { enum: [...BUDGET_STATUSES] },
        steps: limit('used'),
        tokens: limit('used'),
        cost_usd: limit('spent'),
      },
    },
    HandoffRequest: schemaOf(HandoffRequestSchema, 'output'),
    HandoffResponse: {
      type: 'object',
      required: ['handoff', 'prompt', 'path'],
      properties: {
        handoff: ref('HandoffRequest'),
        prompt: { type: 'string', description: 'rendered: ## HANDOFF FROM PREVIOUS AGENT …' },
        path: { type: 'string' },
        session: {
          type: 'object',
          properties: {
            session_id: { type: 'string' },
            thread_id: { type: 'string' },
            status: { enum: ['active'] },
            handed_off_from: { type: 'string' },
            duplicate: { type: 'boolean' },
          },
        },
        source_completion: ref('TurnResponse'),
        warnings: { type: 'array', items: { type: 'string' } },
      },
    },
    OrientationView: {
      type: 'object',
      required: ['session_id', 'orientation'],
      properties: {
        session_id: { type: 'string' },
        orientation: { oneOf: [frozenOrientation, { type: 'null' }] },
        pending: { enum: ['session_start', 'fork', 'handoff', 'context_reset', 'plan_handoff'] },
        preview: frozenOrientation,
        warnings: { type: 'array', items: { type: 'string' } },
      },
    },
    ArtifactEntry: {
      type: 'object',
      required: ['kind', 'path', 'exists'],
      properties: {
        kind: { enum: [...ARTIFACT_KINDS] },
        path: { type: 'string' },
        exists: { type: 'boolean' },
        size: { type: 'integer' },
      },
    },
    ArtifactView: {
      type: 'object',
      required: ['kind', 'path', 'etag', 'content'],
      properties: {
        kind: { enum: [...ARTIFACT_KINDS] },
        path: { type: 'string' },
        etag: { type: 'string' },
        content: { type: 'string' },
        value: { description: 'the ledger, the handoff document, or the memory entries' },
        summary: { type: 'string' },
        warnings: { type: 'array', items: { type: 'string' } },
      },
    },
  }
}
