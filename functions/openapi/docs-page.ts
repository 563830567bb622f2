import { Scalar } from '@scalar/hono-api-reference'
import type { MiddlewareHandler } from 'hono'
import type { AppEnv } from '../http/app-context.ts'

/**
 * `GET /docs`: the API reference, rendered in the browser by Scalar from `/v1/openapi.json`.
 * The page is a few lines of HTML (viewport set for phones); its script comes from a CDN at a
 * pinned version, so nothing of it is bundled into the service.
 */

export const REFERENCE_SCRIPT = 'https://cdn.jsdelivr.net/npm/@scalar/api-reference@1.76.0'

const page = (version: string) =>
  Scalar<AppEnv>({
    url: '/v1/openapi.json',
    pageTitle: `Turnline API ${version.replace(/[<>&"]/g, '')}`,
    cdn: REFERENCE_SCRIPT,
    // No font downloads from a third party; the system fonts serve.
    withDefaultFonts: false,
    hideClientButton: true,
  })

/**
 * The page may load the pinned script, its styles and images, and talk only to this origin (the
 * document, and requests the reader sends from the page).
 */
const POLICY = [
  "default-src 'none'",
  "script-src 'unsafe-inline' https://cdn.jsdelivr.net",
  "style-src 'unsafe-inline' https://cdn.jsdelivr.net",
  'font-src data: https://cdn.jsdelivr.net',
  "img-src 'self' data: https:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

export function docsPage(version: string): MiddlewareHandler<AppEnv> {
  const render = page(version)
  return async (c, next) => {
    const response = await render(c, next)
    if (!response) return
    response.headers.set('content-security-policy', POLICY)
    return response
  }
}
