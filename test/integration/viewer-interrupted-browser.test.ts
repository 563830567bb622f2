import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { afterAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../support/chromium.ts'
import { gate } from '../support/gate.ts'
import { jsonCalls } from '../support/json-calls.ts'
import { startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'

/**
 * An interrupted turn in the viewer, in headless Chromium: `npm start` (the embedded default) is
 * killed with SIGKILL while a turn runs; once it is started again, the session list marks the
 * session `interrupted`, its page says so, and its Resume button finishes the turn through the
 * public API.
 */
const closers: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

describe('an interrupted turn in the viewer', () => {
  it('is shown interrupted after a kill -9, in the list and on its page, and Resume ends it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnline-viewer-interrupted-'))
    await chmod(dir, 0o711) // the sandbox user must reach the workspaces
    const mock = await startMockOpenAI()
    const held = gate()
    let browser: Browser | undefined
    closers.push(
      () => rm(dir, { recursive: true, force: true }),
      () => mock.close(),
      async () => held.open(),
      async () => browser?.close(),
    )
    const env = {
      PORT: '0',
      TURNLINE_DATA_DIR: join(dir, 'data'),
      OPENAI_BASE_URL: mock.baseURL,
      OPENAI_API_KEY: 'sk-test',
      TURNLINE_MODEL: 'gpt-4o-mini',
      TURNLINE_LOG: 'off',
    }
    let server: NodeEntry | undefined
    let url = ''
    const start = async () => {
      server = startNodeEntry(env)
      closers.push(async () => server?.stop())
      url = await server.listening()
    }
    const { call } = jsonCalls(() => url)

    await start()
    const session = (await call('POST', '/v1/sessions', {})).json().session_id as string
    // The turn commits its state before its tool runs, then its next model request hangs.
    mock.enqueue(
      { toolCalls: [{ name: 'exec_command', arguments: '{"cmd":"echo hi"}' }] },
      { text: 'never answered', hold: held.promise },
    )
    const running = call('POST', `/v1/sessions/${session}/turns`, { input: 'look' }).catch(
      (error: unknown) => error,
    )
    await expect.poll(() => mock.requests.length, { timeout: 60_000, interval: 100 }).toBe(2)
    await server?.crash()
    await running
    await start()

    browser = await launchChromium()
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(`${url}/ui`)
    const row = page.locator(`tr[data-session-id="${session}"]`)
    await row.waitFor({ timeout: 20_000 })
    await expect
      .poll(async () => (await row.locator('td.state').textContent()) ?? '', { timeout: 20_000 })
      .toContain('interrupted')

    await row.locator('a').click()
    const live = page.locator('#live-state')
    await expect
      .poll(() => live.getAttribute('data-state'), { timeout: 20_000 })
      .toBe('interrupted')
    expect(await live.textContent()).toContain('interrupted')

    mock.enqueue({ text: 'resumed after the crash' })
    await page.locator('#resume').click()
    await expect.poll(() => live.getAttribute('data-state'), { timeout: 30_000 }).toBe('idle')
    await page.getByText('resumed after the crash').first().waitFor({ timeout: 20_000 })
    const view = (await call('GET', `/v1/sessions/${session}`)).json()
    expect(view.activity).toBeUndefined()
    expect(view.turn_count).toBe(1)
    expect(errors).toEqual([])
    await server?.stop()
  }, 240_000)
})
