import { describe, expect, it } from 'vitest'
import { useViewerServer } from '../support/viewer-server.ts'

/**
 * The viewer on a multi-tenant server (TURNLINE_API_KEYS): without a key it asks for one, a
 * wrong key shows the server's 401, a right key shows that tenant's sessions only, another
 * tenant's session is not found, and the key never appears in a URL.
 */
const KEY_A = 'viewer-key-tenant-a-0123456789'
const KEY_B = 'viewer-key-tenant-b-0123456789'
const fixture = useViewerServer('viewer-mt', {
  TURNLINE_API_KEYS: `${KEY_A}=tenant-a,${KEY_B}=tenant-b`,
  HOST: '127.0.0.1',
})
const mock = () => fixture.mock
const server = () => fixture.server
const browser = () => fixture.browser

async function call(key: string, path: string, body?: unknown) {
  const res = await fetch(`${server().url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const json = (await res.json()) as Record<string, unknown>
  expect(res.status, JSON.stringify(json)).toBeLessThan(300)
  return json
}

describe('the timeline viewer with API keys', { timeout: 120_000 }, () => {
  it('asks for the key, shows a 401, and shows only the key’s tenant', async () => {
    const a = String((await call(KEY_A, '/v1/sessions', {})).session_id)
    const b = String((await call(KEY_B, '/v1/sessions', {})).session_id)
    mock().enqueue({ text: 'Answer for tenant A.' })
    await call(KEY_A, `/v1/sessions/${a}/turns`, { input: 'Hello' })

    const page = await browser().newPage()
    const urls: string[] = []
    const authorized: string[] = []
    page.on('request', (request) => {
      urls.push(request.url())
      void request.allHeaders().then((headers) => {
        if (headers.authorization) authorized.push(headers.authorization)
      })
    })

    // No key yet: the page asks for one and shows no sessions.
    await page.goto(`${server().url}/ui`)
    const panel = page.locator('#key-panel')
    await panel.waitFor({ timeout: 15_000 })
    expect(await panel.textContent()).toContain('This server needs an API key.')
    expect(await page.locator('#sessions').count()).toBe(0)

    // A wrong key: the server's 401 is shown, with the form to try again.
    await page.fill('#key-panel input[type=password]', 'not-a-valid-key-at-all')
    await page.click('#key-panel button[type=submit]')
    await expect
      .poll(async () => (await panel.textContent()) ?? '', { timeout: 15_000 })
      .toContain('The server refused this key: 401 unauthorized')
    expect(await panel.textContent()).toContain('invalid API key')

    // Tenant A's key: A's session is listed, B's is not, and B's cannot be opened.
    await page.fill('#key-panel input[type=password]', KEY_A)
    await page.click('#key-panel button[type=submit]')
    await page.locator(`tr[data-session-id="${a}"]`).waitFor({ timeout: 15_000 })
    expect(await page.locator(`tr[data-session-id="${b}"]`).count()).toBe(0)
    expect(await page.locator('tr[data-session-id]').count()).toBe(1)
    await page.click(`tr[data-session-id="${a}"] a`)
    await page.locator('li.turn.completed').waitFor({ timeout: 15_000 })
    expect(await page.locator('li.turn').textContent()).toContain('Answer for tenant A.')

    await page.goto(`${server().url}/ui#/sessions/${b}`)
    const error = page.locator('#error-panel')
    await error.waitFor({ timeout: 15_000 })
    expect(await error.textContent()).toContain('404 not_found')
    expect(await page.locator('#timeline li').count()).toBe(0)

    // The key went in headers only, kept for this tab; "Forget key" asks again.
    expect(authorized).toContain(`Bearer ${KEY_A}`)
    expect(urls.filter((url) => url.includes(KEY_A) || url.includes('not-a-valid-key'))).toEqual([])
    expect(await page.evaluate(() => sessionStorage.getItem('turnline.api_key'))).toBe(KEY_A)
    await page.click('#forget-key')
    await panel.waitFor({ timeout: 15_000 })
    expect(await page.evaluate(() => sessionStorage.getItem('turnline.api_key'))).toBeNull()
    await page.close()
    mock().assertDone()
  })
})
