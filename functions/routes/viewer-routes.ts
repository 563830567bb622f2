import { Hono } from 'hono'
import type { AppEnv } from '../http/app-context.ts'
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

export function viewerRoutes(version: string): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const page = viewerPage(version)
  routes.get('/ui', () => asset(page, 'text/html; charset=utf-8'))
  routes.get('/ui/', () => new Response(null, { status: 308, headers: { location: '/ui' } }))
  routes.get('/ui/viewer.js', () => asset(VIEWER_JS, 'text/javascript; charset=utf-8'))
  routes.get('/ui/viewer.css', () => asset(VIEWER_CSS, 'text/css; charset=utf-8'))
  return routes
}
