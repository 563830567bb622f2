import { Hono } from 'hono'
import type { AppEnv } from '../http/app-context.ts'
import { operation } from '../openapi/route-docs.ts'
import { VIEWER_CSS, VIEWER_JS } from '../ui/viewer-assets.ts'
import { viewerPage } from '../ui/viewer-page.ts'

/**
 * The session timeline viewer: `GET /ui` and its script and stylesheet. Static and
 * unauthenticated (they hold no data); the page calls the v1 API with the user's key. The CSP
 * allows scripts, styles and requests from this origin only: no inline script, no third party.
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
}

const asset = (body: string, type: string) =>
  new Response(body, { headers: { ...SECURITY_HEADERS, 'content-type': type } })

/** A static, public part of the viewer. */
const staticOperation = (operationId: string, summary: string, type: string, what: string) =>
  operation({
    operationId,
    tags: ['viewer'],
    summary,
    description:
      'Static and public (it holds no data); the page calls the v1 API with the key the user enters.',
    security: [],
    responses: {
      200: {
        description: what,
        content: { [type]: { schema: { type: 'string', description: what } } },
      },
    },
  })

export function viewerRoutes(version: string): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const page = viewerPage(version)
  routes.get(
    '/ui',
    staticOperation('getViewer', 'The session timeline viewer', 'text/html', 'The page.'),
    () => asset(page, 'text/html; charset=utf-8'),
  )
  routes.get(
    '/ui/',
    operation({
      operationId: 'getViewerSlash',
      tags: ['viewer'],
      summary: 'Redirect to /ui',
      description: 'The viewer lives at `/ui`.',
      security: [],
      // Served, but not part of the API: only a redirect to the canonical path.
      hide: true,
      responses: {
        308: {
          description: 'To `/ui`.',
          headers: { Location: { description: '`/ui`', schema: { type: 'string' } } },
        },
      },
    }),
    () => new Response(null, { status: 308, headers: { location: '/ui' } }),
  )
  routes.get(
    '/ui/viewer.js',
    staticOperation('getViewerScript', "The viewer's script", 'text/javascript', 'The script.'),
    () => asset(VIEWER_JS, 'text/javascript; charset=utf-8'),
  )
  routes.get(
    '/ui/viewer.css',
    staticOperation('getViewerStyles', "The viewer's stylesheet", 'text/css', 'The stylesheet.'),
    () => asset(VIEWER_CSS, 'text/css; charset=utf-8'),
  )
  return routes
}
