import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../support/chromium.ts'
import type { RuntimeProcess } from '../support/runtime-process.ts'
import { startDeno, startWorkerd } from '../support/runtimes.ts'
import { type ServerProcess, startServerProcess } from '../support/server-process.ts'

/**
 * The API reference page (`GET /docs`) of `npm start`'s entry in headless Chromium with the
 * network blocked: the browser resolves no name but the server's address, and every request to
 * another origin is aborted. The page must render the document from its own origin's scripts,
 * under its CSP, without one violation. `/` sends the browser on to the viewer. The same page
 * of the Deno entry (`deno serve`, the renderer read from node_modules) renders offline too, and
 * so does the Worker's in workerd (`wrangler dev --local`: the renderer is a static asset).
 */
let dir = ''
let server: ServerProcess
let deno: RuntimeProcess
let workerd: RuntimeProcess
let browser: Browser

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-docs-'))
  server = await startServerProcess({
    TURNLINE_DATA_DIR: dir,
    TURNLINE_LOG: 'off',
    TURNLINE_MODEL_PROVIDER: 'demo',
  })
  deno = await startDeno({
    TURNLINE_STORE: 'memory',
    TURNLINE_SINGLE_TENANT: '1',
    TURNLINE_MODEL_PROVIDER: 'demo',
    TURNLINE_LOG: 'off',
  })
  workerd = await startWorkerd({
    TURNLINE_SINGLE_TENANT: '1',
    TURNLINE_MODEL_PROVIDER: 'demo',
    TURNLINE_LOG: 'off',
  })
  // No name resolves: a script or font from a CDN cannot load, whatever the page asks for.
  browser = await launchChromium(['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'])
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await deno?.stop()
  await workerd?.stop()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('the API reference offline', { timeout: 120_000 }, () => {
  it('renders from its own origin under its CSP with the network blocked', async () => {
    await rendersOffline(server.url)
  })

  it('renders offline on Deno too', async () => {
    await rendersOffline(deno.url)
  })

  it('renders offline on workerd, the renderer served from the Worker static assets', async () => {
    await rendersOffline(workerd.url)
    const script = await fetch(`${workerd.url}/docs/scalar.js`)
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toMatch(/^(text|application)\/javascript/)
    expect((await script.arrayBuffer()).byteLength).toBeGreaterThan(1024 * 1024)
  })

  async function rendersOffline(url: string) {
    const page = await browser.newPage()
    const origin = new URL(url).origin
    const elsewhere: string[] = []
    await page.route('**/*', (route) => {
      const url = route.request().url()
      if (new URL(url).origin === origin || url.startsWith('data:') || url.startsWith('blob:')) {
        return route.continue()
      }
      elsewhere.push(url)
      return route.abort('internetdisconnected')
    })
    const violations: string[] = []
    await page.exposeFunction('reportViolation', (text: string) => violations.push(text))
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        const report = (window as unknown as { reportViolation(text: string): void })
          .reportViolation
        report(`${event.violatedDirective} ${event.blockedURI}`)
      })
    })
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))

    const answer = await page.goto(`${url}/docs`)
    expect(answer?.status()).toBe(200)
    const csp = answer?.headers()['content-security-policy'] ?? ''
    expect(csp).toMatch(/script-src 'self'(;|$)/)
    expect(csp).not.toMatch(/https:|unsafe-eval/)
    // The document's operations, rendered by the renderer served from this origin.
    await page.getByText('Create a session').first().waitFor({ timeout: 60_000 })
    const scripts = await page.$$eval('script[src]', (nodes) =>
      nodes.map((node) => (node as HTMLScriptElement).src),
    )
    expect(scripts).toEqual([`${origin}/docs/scalar.js`, `${origin}/docs/init.js`])
    // No script of another origin nor an inline one was wanted. (The bundle probes `eval` once;
    // the CSP refuses it and the page renders without, so the policy needs no unsafe-eval.)
    expect(
      violations.filter((text) => text.startsWith('script-src') && text !== 'script-src eval'),
    ).toEqual([])
    expect(errors).toEqual([])
    expect(elsewhere).toEqual([])
    await page.close()
  }

  it('sends a browser opening / to the viewer, and an API client the index', async () => {
    const page = await browser.newPage()
    await page.goto(`${server.url}/`)
    expect(new URL(page.url()).pathname).toBe('/ui')
    await page.close()
    const index = await fetch(`${server.url}/`, { headers: { accept: 'application/json' } })
    expect(index.status).toBe(200)
    expect(await index.json()).toMatchObject({ docs: '/docs', ui: '/ui' })
  })
})
