import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { VIEWER_CSS, VIEWER_JS } from '../../functions/ui/viewer-assets.ts'
import { FakeSessionApi } from '../support/fake-session-api.ts'

/**
 * The viewer's static parts: served without a key under a strict CSP, the script is valid
 * JavaScript that never parses text as HTML. What it shows is tested in a real browser
 * (test/integration/viewer-browser.test.ts).
 */
const app = () =>
  createApp({ api: new FakeSessionApi(), auth: { keys: [{ key: 'k'.repeat(20), tenant: 't1' }] } })

describe('the timeline viewer assets', () => {
  it('serves the page, script and stylesheet without a key, under a same-origin CSP', async () => {
    const page = await app().request('/ui')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const csp = page.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("connect-src 'self'")
    expect(csp).not.toContain('unsafe-inline')
    expect(page.headers.get('x-content-type-options')).toBe('nosniff')
    const html = await page.text()
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">')
    expect(html).toContain('<script src="/ui/viewer.js" defer></script>')
    // No inline script: the CSP would block it.
    expect(html.match(/<script/g)).toHaveLength(1)

    const script = await app().request('/ui/viewer.js')
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(await script.text()).toBe(VIEWER_JS)
    const css = await app().request('/ui/viewer.css')
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8')
    expect(await css.text()).toBe(VIEWER_CSS)

    const slash = await app().request('/ui/')
    expect(slash.status).toBe(308)
    expect(slash.headers.get('location')).toBe('/ui')
  })

  it('is linked from the root and the docs page', async () => {
    const root = await app().request('/')
    expect(await root.json()).toMatchObject({ ui: '/ui', docs: '/docs' })
    expect(root.headers.get('link')).toContain('</ui>')
    // The docs page renders the OpenAPI document, whose description links the viewer.
    const doc = (await (await app().request('/v1/openapi.json')).json()) as {
      info: { description: string }
    }
    expect(doc.info.description).toContain('](/ui)')
  })

  it('is one valid script that never turns text into HTML', () => {
    // Compiles without running: a syntax error in any part fails here.
    expect(() => new Function(VIEWER_JS)).not.toThrow()
    for (const sink of [
      'innerHTML',
      'outerHTML',
      'insertAdjacentHTML',
      'document.write',
      'eval(',
    ]) {
      expect(VIEWER_JS, sink).not.toContain(sink)
    }
    expect(VIEWER_JS).not.toMatch(/new Function|localStorage|[?&]key=/)
    // Small enough to ship in the Worker bundle next to everything else.
    expect(VIEWER_JS.length + VIEWER_CSS.length).toBeLessThan(64 * 1024)
  })

  it('carries the shared SSE decoder and backoff as built from src/shared (not a copy of its own)', async () => {
    const check = spawnSync(process.execPath, ['infra/build/viewer-shared.mjs', '--check'], {
      encoding: 'utf8',
    })
    expect(check.status, check.stderr).toBe(0)
    expect(VIEWER_JS).toContain('new shared.SseDecoder()')
    expect(VIEWER_JS).toContain('shared.backoffMs(')
  })
})
