import { Hono } from 'hono'
import { HealthSchema, ServiceIndexSchema } from '../../src/contract/api-responses.ts'
import type { AppEnv } from '../http/app-context.ts'
import { JSON_TYPE } from '../http/event-framing.ts'
import { docsPage } from '../openapi/docs-page.ts'
import { jsonAnswer, operation } from '../openapi/route-docs.ts'

const links =
  '</docs>; rel="service-doc", </v1/openapi.json>; rel="service-desc", </ui>; rel="alternate"; title="session viewer"'

/**
 * Unauthenticated routes: health, the OpenAPI document (`documentJson`) and the docs page; the
 * root also links the session viewer (/ui).
 */
export function metaRoutes(version: string, documentJson: () => Promise<string>): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
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
  // The root points to the docs: browsers are sent there, other clients get the links.
  routes.get(
    '/',
    operation({
      operationId: 'serviceIndex',
      tags: ['meta'],
      summary: 'Links to the docs and the document',
      description:
        'A browser (`Accept: text/html`) is redirected to `/docs`; other clients get the links as JSON and in the `Link` header.',
      security: [],
      responses: {
        200: jsonAnswer('The links.', ServiceIndexSchema, {
          Link: {
            description: 'The service-doc and service-desc links.',
            schema: { type: 'string' },
          },
        }),
        302: {
          description: 'To `/docs`, for a browser.',
          headers: { Location: { description: '`/docs`', schema: { type: 'string' } } },
        },
      },
    }),
    (c) => {
      if ((c.req.header('accept') ?? '').includes('text/html')) {
        return new Response(null, { status: 302, headers: { location: '/docs', link: links } })
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
        { headers: { link: links } },
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
    async () => new Response(await documentJson(), { headers: { 'content-type': JSON_TYPE } }),
  )
  routes.get(
    '/docs',
    operation({
      operationId: 'getReferencePage',
      tags: ['meta'],
      summary: 'The API reference page',
      description: 'HTML rendering this document in the browser (Scalar); works on a phone.',
      security: [],
      responses: {
        200: {
          description: 'The page.',
          content: { 'text/html': { schema: { type: 'string', description: 'HTML.' } } },
        },
      },
    }),
    docsPage(version),
  )
  return routes
}
