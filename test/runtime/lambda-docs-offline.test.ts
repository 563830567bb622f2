import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LambdaBundle, loadLambdaBundle } from '../support/lambda-bundle.ts'
import { LAMBDA_URL_HOST } from '../support/lambda-runtime.ts'

/**
 * The Lambda bundle (`npm run build:lambda`, loaded as the runtime loads it) serves the API
 * reference renderer itself, from the `reference/scalar.js` the build puts beside index.mjs: the
 * `/docs` page names only scripts of its own origin, so it renders offline (the page itself is
 * Node's, rendered in headless Chromium by docs-offline-browser.test.ts).
 */
let bundle: LambdaBundle

beforeAll(async () => {
  bundle = await loadLambdaBundle({
    TURNLINE_STORE: 'memory',
    TURNLINE_SINGLE_TENANT: '1',
    TURNLINE_MODEL_PROVIDER: 'demo',
    TURNLINE_ALLOWED_HOSTS: LAMBDA_URL_HOST,
    TURNLINE_LOG: 'off',
  })
  // The bundle is built, then loaded: under load on the shared machine that takes most of a minute.
}, 240_000)
afterAll(async () => {
  await bundle?.close()
})

describe('/docs on the Lambda bundle', { timeout: 60_000 }, () => {
  it('serves the renderer from the function itself, the package file byte for byte', async () => {
    const page = await bundle.call({ method: 'GET', path: '/docs' })
    expect(page.status).toBe(200)
    expect(page.text).toContain('<script src="/docs/scalar.js"></script>')
    expect(page.text).not.toMatch(/https?:\/\//)
    const script = await bundle.call({ method: 'GET', path: '/docs/scalar.js' })
    expect(script.status).toBe(200)
    expect(script.contentType).toMatch(/javascript/)
    const main = createRequire(import.meta.url).resolve('@scalar/api-reference')
    const file = readFileSync(join(dirname(main), 'browser', 'standalone.js'), 'utf8')
    expect(script.text.length).toBe(file.length)
    expect(script.text === file).toBe(true)
  })
})
