import { Hono } from 'hono'
import {
  type ArtifactKind,
  ArtifactKindSchema,
  type ArtifactWrite,
  artifactPutSchema,
  isMemoryKind,
  MemoryAppendSchema,
} from '../../src/contract/artifacts.ts'
import { TurnlineError } from '../../src/contract/errors.ts'
import { type AppEnv, type RouteContext, validBody } from '../http/app-context.ts'
import { parseInput, rejectQuery } from '../http/request-input.ts'

/** The workspace-name rule of the store (src/store/session-ref.ts). */
const WORKSPACE = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/

export function parseWorkspace(value: string | undefined): string {
  if (value === undefined || !WORKSPACE.test(value) || value.includes('..')) {
    throw new TurnlineError(
      'invalid_input',
      `workspace ${JSON.stringify((value ?? '').slice(0, 80))} is not valid: use 1–128 characters from A-Z a-z 0-9 . _ -, not starting with "." or "-", without ".."`,
      { details: { field: 'path.workspace' } },
    )
  }
  return value
}

function parseKind(value: string | undefined): ArtifactKind {
  return parseInput(ArtifactKindSchema, value, 'path.kind')
}

/** `If-Match`: the `etag` a GET answered; a write of another version is 409. */
function parseIfMatch(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  if (value.length === 0 || value.length > 200 || value === '*') {
    throw new TurnlineError('invalid_input', 'If-Match must be the etag of a previous read', {
      details: { field: 'header.if-match' },
    })
  }
  return value
}

/**
 * The durable artifacts of a workspace (`.vtcode/` in object storage): list, read, replace
 * (documents, the handoff; the ledger is updated field by field), append (notes, decisions),
 * delete. Every view carries an `etag` for `If-Match`.
 */
export function artifactRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.get('/workspaces/:workspace/artifacts', async (c) => {
    const workspace = parseWorkspace(c.req.param('workspace'))
    rejectQuery(c.req.url)
    const artifacts = await ctx.api.listArtifacts(c.get('tenant'), workspace)
    return c.json({ workspace, artifacts })
  })
  routes.get('/workspaces/:workspace/artifacts/:kind', async (c) => {
    const workspace = parseWorkspace(c.req.param('workspace'))
    const kind = parseKind(c.req.param('kind'))
    rejectQuery(c.req.url)
    return c.json(await ctx.api.getArtifact(c.get('tenant'), workspace, kind))
  })
  routes.put('/workspaces/:workspace/artifacts/:kind', async (c) => {
    const workspace = parseWorkspace(c.req.param('workspace'))
    const kind = parseKind(c.req.param('kind'))
    rejectQuery(c.req.url)
    const ifMatch = parseIfMatch(c.req.header('if-match'))
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
  })
  routes.post('/workspaces/:workspace/artifacts/:kind', async (c) => {
    const workspace = parseWorkspace(c.req.param('workspace'))
    const kind = parseKind(c.req.param('kind'))
    rejectQuery(c.req.url)
    if (!isMemoryKind(kind)) {
      throw new TurnlineError(
        'conflict',
        `only notes and decisions take appends; PUT replaces ${kind}`,
        { retryable: false },
      )
    }
    const body = await validBody(c, ctx, MemoryAppendSchema)
    return c.json(await ctx.api.appendArtifact(c.get('tenant'), workspace, kind, body.text), 201)
  })
  routes.delete('/workspaces/:workspace/artifacts/:kind', async (c) => {
    const workspace = parseWorkspace(c.req.param('workspace'))
    const kind = parseKind(c.req.param('kind'))
    rejectQuery(c.req.url)
    await ctx.api.deleteArtifact(c.get('tenant'), workspace, kind)
    return new Response(null, { status: 204 })
  })
  return routes
}
