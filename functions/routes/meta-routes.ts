import { Hono } from 'hono'
import type { AppEnv } from '../http/app-context.ts'
import { JSON_TYPE } from '../http/event-framing.ts'
import { docsPage } from '../openapi/docs-page.ts'
import { openApiJson } from '../openapi/openapi.ts'

/** Unauthenticated routes: health, the OpenAPI document and the docs page (which links /ui). */
export function metaRoutes(version: string): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.get('/healthz', () => Response.json({ status: 'ok' }))
  // The root points to the docs: browsers are sent there, other clients get the links.
  routes.get('/', (c) => {
    const links =
      '</docs>; rel="service-doc", </v1/openapi.json>; rel="service-desc", </ui>; rel="alternate"; title="session viewer"'
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
  })
  routes.get(
    '/v1/openapi.json',
    () => new Response(openApiJson(version), { headers: { 'content-type': JSON_TYPE } }),
  )
  routes.get(
    '/docs',
    () =>
      new Response(docsPage(version), {
        headers: {
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
        },
      }),
  )
  return routes
}
