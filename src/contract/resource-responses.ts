import * as z from 'zod'
import { ARTIFACT_KINDS } from './artifacts.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * Response bodies of the artifact, meta and Open Responses routes (notes:
 * `response-fields.ts`): an artifact and the artifact list, health, the service index, and
 * `/v1/responses`' resource and deletion.
 */

const ArtifactKind = lazySchema(() => z.enum(ARTIFACT_KINDS).describe('The artifact kind.'))

export const ArtifactListSchema = lazySchema(() =>
  z
    .object({
      workspace: z.string().describe('The workspace.'),
      artifacts: z
        .array(
          z.object({
            kind: ArtifactKind,
            path: z.string().describe('Relative to the workspace: `.vtcode/…`.'),
            exists: z.boolean().describe('Whether the object exists.'),
            size: z
              .number()
              .int()
              .nonnegative()
              .optional()
              .describe('Its size in bytes, when it exists.'),
          }),
        )
        .describe('Every kind, in a fixed order.'),
    })
    .meta({ id: 'ArtifactList', description: "The workspace's durable artifacts." }),
)

export const ArtifactViewSchema = lazySchema(() =>
  z
    .object({
      kind: ArtifactKind,
      path: z.string().describe('Relative to the workspace: `.vtcode/…`.'),
      etag: z
        .string()
        .describe('Opaque version; send it back as `If-Match` to replace only this version.'),
      content: z
        .string()
        .describe('The raw text of the object (markdown, or JSON for progress and handoff).'),
      value: z
        .unknown()
        .optional()
        .describe('Parsed form: the ledger, the handoff, or the memory entries.'),
      summary: z.string().optional().describe('One-line orientation summary of the artifact.'),
      warnings: z.array(z.string()).optional().describe('Non-fatal notices.'),
    })
    .meta({ id: 'ArtifactView', description: 'One artifact: raw content, parsed value and etag.' }),
)

export const HealthSchema = lazySchema(() =>
  z
    .object({ status: z.literal('ok').describe('Always `ok` when the process serves.') })
    .meta({ id: 'Health', description: 'Liveness.' }),
)

export const ServiceIndexSchema = lazySchema(() =>
  z
    .object({
      service: z.literal('turnline').describe('The service name.'),
      version: z.string().describe('The API version.'),
      docs: z.string().describe('The API reference page.'),
      ui: z.string().describe('The session timeline viewer.'),
      openapi: z.string().describe('The OpenAPI document.'),
      health: z.string().describe('The liveness route.'),
    })
    .meta({ id: 'ServiceIndex', description: 'Links to the docs, the document and health.' }),
)

/** `DELETE /v1/responses/{id}`: what was deleted. */
export const ResponseDeletedSchema = lazySchema(() =>
  z
    .object({
      id: z.string().describe('The response deleted (`resp_<session id>`).'),
      object: z.literal('response').describe('Always `response`.'),
      deleted: z.literal(true).describe('Always true.'),
    })
    .meta({ id: 'ResponseDeleted', description: 'A deleted response.' }),
)

export const ResponseResourceSchema = lazySchema(() =>
  z
    .looseObject({
      id: z.string().describe('`resp_<thread id>`: `GET /v1/responses/{id}` reads it back.'),
      object: z.literal('response').describe('Always `response`.'),
      created_at: z.number().int().describe('Unix seconds when the request arrived.'),
      completed_at: z
        .number()
        .int()
        .nullable()
        .describe('Unix seconds when it completed; null while it runs.'),
      status: z
        .string()
        .describe(
          '`queued` (background), `in_progress`, `completed`, `failed`, `incomplete` or `cancelled`.',
        ),
      model: z.string().describe('The model label the request named.'),
      output: z.array(z.unknown()).describe('Open Responses output items.'),
      usage: z.unknown().describe('Open Responses usage; null when unknown.'),
    })
    .meta({
      id: 'ResponseResource',
      description:
        'Open Responses ResponseResource (https://www.openresponses.org/reference): every field the schema requires is present; the others follow it.',
    }),
)
