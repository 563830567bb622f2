import { TurnlineError } from '../../src/contract/errors.ts'
import { escapeHtml, PAGE_HEAD } from '../ui/viewer-page.ts'

/**
 * `GET /docs`: the API reference, rendered in the browser by Scalar (`@scalar/api-reference`)
 * from `/v1/openapi.json`. The page is a few lines of HTML and two scripts of this origin:
 * Scalar's standalone bundle (`/docs/scalar.js`, the npm package's own file, which the entry
 * hands over as `ReferenceScript`) and the call that starts it (`/docs/init.js`). So the page
 * renders offline, under a CSP that allows scripts of this origin only (no inline script, no
 * third party). A runtime that has no copy of the bundle (a Worker deployed without its static
 * assets; see docs/http-api.md) loads it from a CDN at the same pinned version instead.
 */

/**
 * Scalar's standalone bundle (`dist/browser/standalone.js` of @scalar/api-reference): its bytes
 * (read from a file), or a stream of them (a Worker's static asset).
 */
export type ReferenceScript = () => Promise<Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>>

export const REFERENCE_VERSION = '1.76.0'
export const REFERENCE_CDN = `https://cdn.jsdelivr.net/npm/@scalar/api-reference@${REFERENCE_VERSION}`

const INIT_JS = `Scalar.createApiReference('#app', {
  url: '/v1/openapi.json',
  withDefaultFonts: false,
  hideClientButton: true,
})
`

const pageHtml = (version: string, script: string) => `<!doctype html>
<html lang="en">
<head>
${PAGE_HEAD}
<title>Turnline API ${escapeHtml(version)}</title>
</head>
<body>
<div id="app"></div>
<script src="${script}"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`

/**
 * Scripts of this origin only (or the pinned CDN where there is no local copy); Scalar sets
 * its styles at run time (inline styles), and talks only to this origin (the document, and
 * requests the reader sends from the page).
 */
const policy = (scriptSource: string) =>
  [
    "default-src 'none'",
    `script-src ${scriptSource}`,
    `style-src 'unsafe-inline' ${scriptSource}`,
    `font-src data: ${scriptSource}`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ')

const SECURITY = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' }

export interface DocsPage {
  page(): Response
  init(): Response
  /** The bundle; 404 where this runtime has no copy (the page then loads the CDN's). */
  script(): Promise<Response>
}

export function docsPage(version: string, referenceScript?: ReferenceScript): DocsPage {
  const local = referenceScript !== undefined
  const html = pageHtml(version, local ? '/docs/scalar.js' : REFERENCE_CDN)
  const csp = policy(local ? "'self'" : `'self' https://cdn.jsdelivr.net`)
  return {
    page: () =>
      new Response(html, {
        headers: {
          ...SECURITY,
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': csp,
          'cache-control': 'no-cache',
        },
      }),
    init: () =>
      new Response(INIT_JS, {
        headers: { ...SECURITY, 'content-type': 'text/javascript; charset=utf-8' },
      }),
    script: async () => {
      if (!referenceScript) {
        throw new TurnlineError('not_found', 'this runtime has no copy of the reference bundle')
      }
      return new Response(await referenceScript(), {
        headers: {
          ...SECURITY,
          'content-type': 'text/javascript; charset=utf-8',
          // The file of one pinned package version: it changes only with a new deployment.
          'cache-control': 'public, max-age=3600',
        },
      })
    },
  }
}
