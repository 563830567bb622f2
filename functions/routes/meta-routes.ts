import { Hono } from 'hono'
import { ErrorBodySchema } from '../../src/contract/error-responses.ts'
import { HealthSchema, ServiceIndexSchema } from '../../src/contract/resource-responses.ts'
import type { AppEnv } from '../http/app-context.ts'
import { jsonResponse } from '../http/json-response.ts'
import { docsPage, type ReferenceScript } from '../openapi/docs-page.ts'
import { jsonAnswer, operation } from '../openapi/route-docs.ts'

const links =
  '</docs>; rel="service-doc", </v1/openapi.json>; rel="service-desc", </ui>; rel="alternate"; title="session viewer"'

const SCRIPT_ANSWER = {
  description: 'The script.',
  content: { 'text/javascript': { schema: { type: 'string', description: 'JavaScript.' } } },
} as const

/**
 * Unauthenticated routes: health, the OpenAPI document (`documentJson`) and the docs page with
 * its scripts (`referenceScript`: the renderer's bundle, when this runtime has a copy); the
 * root sends browsers to the session viewer (/ui) and gives other clients the links.
 */
export function metaRoutes(
  version: string,
  documentJson: () => Promise<string>,
  referenceScript?: ReferenceScript,
): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const docs = docsPage(version, referenceScript)
  routes.get(
    '/healthz',
    operation({
      operationId: 'health',
      tags: ['meta'],
      summary: 'Liveness',
      description: 'Answers while the process serves; checks no backend.',
      security: [],
      responses: { 200: jsonAnswer('The process serves.', HealthSchema) },
    }),
    () => Response.json({ status: 'ok' }),
  )
  // Browsers are sent to the viewer; other clients get the links.
  routes.get(
    '/',
    operation({
      operationId: 'serviceIndex',
      tags: ['meta'],
      summary: 'Links to the docs and the document',
      description:
        'A browser (`Accept` naming `text/html`) is redirected to the session viewer `/ui`; other clients (`application/json`, `*/*`, none) get the links as JSON and in the `Link` header.',
      security: [],
      responses: {
        200: jsonAnswer('The links.', ServiceIndexSchema, {
          Link: {
            description: 'The service-doc and service-desc links.',
            schema: { type: 'string' },
          },
        }),
        302: {
          description: 'To `/ui`, for a browser.',
          headers: { Location: { description: '`/ui`', schema: { type: 'string' } } },
        },
      },
    }),
    (c) => {
      if ((c.req.header('accept') ?? '').includes('text/html')) {
        return new Response(null, {
          status: 302,
          headers: { location: '/ui', link: links, vary: 'Accept' },
        })
      }
      return Response.json(
        {
          service: 'turnline',
          version,
          docs: '/docs',
          ui: '/ui',
          openapi: '/v1/openapi.json',
          health: '/healthz',
        },
        { headers: { link: links, vary: 'Accept' } },
      )
    },
  )
  routes.get(
    '/v1/openapi.json',
    operation({
      operationId: 'getOpenApiDocument',
      tags: ['meta'],
      summary: 'This OpenAPI document',
      description: 'OpenAPI 3.1, generated from the route declarations.',
      security: [],
      responses: {
        200: {
          description: 'The document.',
          content: {
            'application/json': {
              schema: { type: 'object', description: 'An OpenAPI 3.1 document.' },
            },
          },
        },
      },
    }),
    async () => jsonResponse(await documentJson()),
  )
  routes.get(
    '/docs',
    operation({
      operationId: 'getReferencePage',
      tags: ['meta'],
      summary: 'The API reference page',
      description:
        'HTML rendering this document in the browser (Scalar, served by this server: no CDN, no inline script); works on a phone and offline.',
      security: [],
      responses: {
        200: {
          description: 'The page.',
          content: { 'text/html': { schema: { type: 'string', description: 'HTML.' } } },
        },
      },
    }),
    () => docs.page(),
  )
  routes.get(
    '/docs/init.js',
    operation({
      operationId: 'getReferenceInit',
      tags: ['meta'],
      summary: "The reference page's start script",
      description: 'Starts the renderer on `/v1/openapi.json`.',
      security: [],
      responses: {
        200: SCRIPT_ANSWER,
      },
    }),
    () => docs.init(),
  )
  routes.get(
    '/docs/scalar.js',
    operation({
      operationId: 'getReferenceRenderer',
      tags: ['meta'],
      summary: 'The reference renderer',
      description:
        "Scalar's standalone bundle, from its npm package (`@scalar/api-reference`, the pinned version). 404 on a runtime that has no copy; its page loads the bundle from a CDN instead.",
      security: [],
      responses: {
        200: SCRIPT_ANSWER,
        404: jsonAnswer('`not_found`: no local copy on this runtime.', ErrorBodySchema),
      },
    }),
    () => docs.script(),
  )
  return routes
}
