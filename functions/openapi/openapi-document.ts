import type { Hono } from 'hono'
import { generateSpecs } from 'hono-openapi'
import type { AppEnv } from '../http/app-context.ts'
import { TAGS } from './route-docs.ts'

/**
 * The OpenAPI 3.1 document of an app, derived from its routes: hono-openapi walks the routes
 * the app really serves and collects what each declares (declared-input.ts, route-docs.ts), so a
 * route cannot be served without being documented, nor documented without being served.
 */

const DESCRIPTION = [
  'The VT Code agent-loop contract (event schema 0.11.0) over HTTP: one agent turn per call, state in object storage and Redis.',
  '',
  'Authenticate with `Authorization: Bearer <key>` (TURNLINE_API_KEYS; a deployment without keys serves one local tenant). The routes marked public need no key: health, this document, the reference page, and the signed webhook and runner callbacks.',
  '',
  'Every error is `{"error":{"code","message","details?"}}`; the code is stable, the message names the offending field. A known path called with a method it does not serve answers 405 `method_not_allowed` with `Allow`; `OPTIONS` on a known path answers 204 with `Allow`.',
  '',
  'Browsers: pages of the origins a deployment lists in TURNLINE_CORS_ORIGINS may call the API (CORS; off by default). Preflights are answered without a key; the grant allows `Authorization`, `Content-Type`, `Idempotency-Key`, `Last-Event-ID`, `If-Match` and `traceparent`, and exposes `RateLimit-*`, `Retry-After` and `Turnline-Next-Seq`.',
  '',
  'The [session viewer](/ui) shows the sessions of a tenant and their events, live.',
].join('\n')

export async function openApiDocument(app: Hono<AppEnv>, version: string): Promise<object> {
  const document = await generateSpecs(app, {
    documentation: {
      info: {
        title: 'Turnline',
        version,
        description: DESCRIPTION,
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/', description: 'This deployment (the origin serving this document).' }],
      tags: TAGS.map((tag) => ({ ...tag })),
      security: [{ bearer: [] }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An API key of the deployment (TURNLINE_API_KEYS), sent as a bearer token.',
          },
        },
      },
    },
    excludeStaticFile: false,
    defaultValidationErrorResponse: false,
  })
  return document
}

/** The document as JSON text, built once per app (the routes do not change once served). */
export function openApiJsonOf(app: Hono<AppEnv>, version: string): () => Promise<string> {
  let text: Promise<string> | undefined
  return () => {
    text ??= openApiDocument(app, version).then((document) => JSON.stringify(document))
    return text
  }
}
