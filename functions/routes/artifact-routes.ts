import { Hono } from 'hono'
import {
  ArtifactPutBodySchema,
  type ArtifactWrite,
  artifactPutSchema,
  isMemoryKind,
  MemoryAppendSchema,
} from '../../src/contract/artifacts.ts'
import { TurnlineError } from '../../src/contract/errors.ts'
import { ArtifactListSchema, ArtifactViewSchema } from '../../src/contract/resource-responses.ts'
import {
  ArtifactParamsSchema,
  IfMatchHeadersSchema,
  WorkspaceParamsSchema,
} from '../../src/contract/route-params.ts'
import { type AppEnv, type RouteContext, validBody } from '../http/app-context.ts'
import {
  documentedBody,
  headerParams,
  jsonBody,
  noQuery,
  pathParams,
} from '../openapi/declared-input.ts'
import { errorAnswers, jsonAnswer, operation } from '../openapi/route-docs.ts'

/**
 * The durable artifacts of a workspace (`.vtcode/` in object storage): list, read, replace
 * (documents, the handoff; the ledger is updated field by field), append (notes, decisions),
 * delete. Every view carries an `etag` for `If-Match`.
 */
export function artifactRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.get(
    '/workspaces/:workspace/artifacts',
    operation({
      operationId: 'listArtifacts',
      tags: ['artifacts'],
      summary: "List a workspace's artifacts",
      description: 'Each kind, its `.vtcode/` path, and whether it exists.',
      responses: {
        200: jsonAnswer('The artifacts.', ArtifactListSchema),
        ...errorAnswers(400, 401, 500, 503),
      },
    }),
    pathParams(WorkspaceParamsSchema),
    noQuery,
    async (c) => {
      const { workspace } = c.req.valid('param')
      const artifacts = await ctx.api.listArtifacts(c.get('tenant'), workspace)
      return c.json({ workspace, artifacts })
    },
  )
  routes.get(
    '/workspaces/:workspace/artifacts/:kind',
    operation({
      operationId: 'getArtifact',
      tags: ['artifacts'],
      summary: 'Read one artifact',
      description: 'Raw content, parsed value, summary and etag.',
      responses: {
        200: jsonAnswer('The artifact.', ArtifactViewSchema),
        ...errorAnswers(400, 401, 404, 500, 503),
      },
    }),
    pathParams(ArtifactParamsSchema),
    noQuery,
    async (c) => {
      const { workspace, kind } = c.req.valid('param')
      return c.json(await ctx.api.getArtifact(c.get('tenant'), workspace, kind))
    },
  )
  routes.put(
    '/workspaces/:workspace/artifacts/:kind',
    operation({
      operationId: 'putArtifact',
      tags: ['artifacts'],
      summary: 'Replace an artifact',
      description:
        'Replaces a document (`{content}`) or the handoff (a HandoffRequest), or updates the progress ledger (fields given replace, others kept). `notes` and `decisions` (append-only) and `context_reset` are 409. With `If-Match`, only the version read is replaced.',
      responses: {
        200: jsonAnswer('The artifact as written.', ArtifactViewSchema),
        ...errorAnswers(400, 401, 409, 413, 500, 503),
      },
    }),
    pathParams(ArtifactParamsSchema),
    noQuery,
    headerParams(IfMatchHeadersSchema),
    // The body's schema depends on the kind (artifactPutSchema); documented as their union.
    documentedBody(ArtifactPutBodySchema, {
      required: true,
      examples: {
        document: {
          summary: 'A markdown document (spec, contract, …)',
          value: { content: '# Spec\n\nParse empty input.' },
        },
      },
    }),
    async (c) => {
      const { workspace, kind } = c.req.valid('param')
      const ifMatch = c.req.valid('header')['If-Match']
      const schema = artifactPutSchema(kind)
      if (!schema) {
        throw new TurnlineError(
          'conflict',
          isMemoryKind(kind)
            ? `${kind} is append-only: POST {"text"} adds an entry`
            : `${kind} is written by a context reset, not by PUT`,
          { retryable: false },
        )
      }
      const body = await validBody(c, ctx, schema)
      const write = (
        kind === 'progress'
          ? { kind, update: body }
          : kind === 'handoff'
            ? { kind, handoff: body }
            : { kind, content: (body as { content: string }).content }
      ) as ArtifactWrite
      const view = await ctx.api.putArtifact(c.get('tenant'), workspace, write, {
        ...(ifMatch !== undefined ? { ifMatch } : {}),
      })
      return c.json(view)
    },
  )
  routes.post(
    '/workspaces/:workspace/artifacts/:kind',
    operation({
      operationId: 'appendArtifact',
      tags: ['artifacts'],
      summary: 'Append to notes or decisions',
      description:
        'Adds one entry to the append-only loop memory (`notes` or `decisions`); other kinds are 409 (PUT replaces them).',
      responses: {
        201: jsonAnswer('The file after the append.', ArtifactViewSchema),
        ...errorAnswers(400, 401, 409, 413, 500, 503),
      },
    }),
    pathParams(ArtifactParamsSchema),
    noQuery,
    async (c, next) => {
      const { kind } = c.req.valid('param')
      if (!isMemoryKind(kind)) {
        throw new TurnlineError(
          'conflict',
          `only notes and decisions take appends; PUT replaces ${kind}`,
          { retryable: false },
        )
      }
      await next()
    },
    jsonBody(ctx, MemoryAppendSchema, {
      required: true,
      examples: { note: { summary: 'One note', value: { text: 'The CI runs on Node 20.' } } },
    }),
    async (c) => {
      const { workspace, kind } = c.req.valid('param')
      const view = await ctx.api.appendArtifact(
        c.get('tenant'),
        workspace,
        kind as 'notes' | 'decisions',
        c.req.valid('json').text,
      )
      return c.json(view, 201)
    },
  )
  routes.delete(
    '/workspaces/:workspace/artifacts/:kind',
    operation({
      operationId: 'deleteArtifact',
      tags: ['artifacts'],
      summary: 'Delete an artifact',
      description: 'Deleting a missing one is not an error.',
      responses: {
        204: { description: 'Deleted.' },
        ...errorAnswers(400, 401, 500, 503),
      },
    }),
    pathParams(ArtifactParamsSchema),
    noQuery,
    async (c) => {
      const { workspace, kind } = c.req.valid('param')
      await ctx.api.deleteArtifact(c.get('tenant'), workspace, kind)
      return new Response(null, { status: 204 })
    },
  )
  return routes
}
