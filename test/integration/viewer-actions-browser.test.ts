import type { Page } from 'playwright-core'
import { describe, expect, it, vi } from 'vitest'
import { useViewerServer } from '../support/viewer-server.ts'

/**
 * The viewer as a place to act, in headless Chromium against `npm start`'s entry with an API key
 * (multi-tenant), the local services, the mock OpenAI model and the embedded sandbox runner: a
 * turn sent from the page, its input on the timeline, a tool call approved and its command shown
 * running with its elapsed time, a plan executed, a fork at a chosen turn, cancel and delete
 * behind a confirmation, and a denial on a phone viewport. Every action goes through the public
 * API with the page's key.
 */
const KEY = 'viewer-actions-key-0123456789'
const fixture = useViewerServer('viewer-actions', {
  TURNLINE_API_KEYS: `${KEY}=acme`,
  // a command that outlives one second leaves the turn waiting on it
  TURNLINE_INVOCATION_BUDGET_MS: '1000',
  HOST: '127.0.0.1',
})
const mock = () => fixture.mock
const server = () => fixture.server
const browser = () => fixture.browser

async function call(path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${server().url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const json = (await res.json()) as Record<string, unknown>
  expect(res.status, JSON.stringify(json)).toBeLessThan(300)
  return json
}

const text = async (page: Page, selector: string) =>
  (await page.locator(selector).textContent()) ?? ''
const liveState = (page: Page) => page.locator('#live-state').getAttribute('data-state')
const conversation = (request: { body: { messages?: unknown } } | undefined) =>
  ((request?.body.messages ?? []) as { role: string; content: unknown }[])
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .map(
      (m) => `${m.role}:${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`,
    )

/** A page with the key entered in its form, showing `hash`. */
async function openWithKey(page: Page, hash: string) {
  await page.goto(`${server().url}/ui${hash}`)
  const input = page.locator('#key-panel input[name="api-key"]')
  await input.waitFor({ timeout: 15_000 })
  await input.fill(KEY)
  await page.locator('#key-panel button[type="submit"]').click()
}

async function send(page: Page, message: string) {
  await page.locator('#composer-text').fill(message)
  await page.locator('#composer-send').click()
}

describe('acting on sessions from the viewer', { timeout: 240_000 }, () => {
  it('sends, approves, waits on a command, forks at a turn, executes a plan, cancels and deletes', async () => {
    // exec_command asks; waiting on its command (write_stdin) is allowed
    const { session_id: id } = (await call('/v1/sessions', {
      permissions: { mode: 'default', allow: ['write_stdin'] },
    })) as { session_id: string }
    const page = await browser().newPage({ viewport: { width: 1280, height: 900 } })
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    const urls: string[] = []
    page.on('request', (request) => urls.push(request.url()))
    await openWithKey(page, `#/sessions/${id}`)
    await expect.poll(() => liveState(page), { timeout: 15_000 }).toBe('idle')

    // A turn sent from the page; its tool call waits for approval; what was asked is shown.
    // The model runs the command, then waits for it (write_stdin wait) past the invocation's
    // budget, then answers.
    mock().enqueue({
      toolCalls: [
        {
          id: 'c1',
          name: 'exec_command',
          arguments: '{"cmd":"sleep 5; echo built","yield_time_ms":100}',
        },
      ],
    })
    let waited = false
    mock().respond((request) => {
      const seen = JSON.stringify(request.body.messages ?? [])
      const session = /session_id\\?"\s*:\s*\\?"?([A-Za-z0-9_-]+)/.exec(seen)?.[1]
      if (!waited && session) {
        waited = true
        const args = { session_id: session, action: 'wait', wait_timeout_seconds: 20 }
        return { toolCalls: [{ id: 'c2', name: 'write_stdin', arguments: JSON.stringify(args) }] }
      }
      return { text: 'Built.' }
    })
    await send(page, 'Run the build')
    await expect.poll(() => liveState(page), { timeout: 20_000 }).toBe('awaiting_approval')
    expect(await text(page, '#live-state')).toMatch(
      /^awaiting approval: exec_command \(sleep 5; echo built\) for \d+ s$/,
    )
    await expect
      .poll(() => text(page, 'li.turn[data-turn="1"] .turn-input'))
      .toBe('askedRun the build')
    expect(await page.locator('#composer').isHidden()).toBe(true)

    // Approved: the command yields still running, the wait outlives the invocation and the page
    // shows it running and counting; continued, the turn gets the command's end and answers.
    await page.locator('#approve').click()
    await expect.poll(() => liveState(page), { timeout: 20_000 }).toBe('waiting')
    expect(await text(page, '#live-state')).toMatch(
      /^waiting on a command: write_stdin — running for \d+ s$/,
    )
    await expect.poll(() => text(page, 'li.turn[data-turn="1"]')).toContain('left running')
    await page.locator('li.item[data-waiting]').first().waitFor({ timeout: 10_000 })
    const first = await text(page, '#live-state')
    await expect.poll(() => text(page, '#live-state'), { timeout: 10_000 }).not.toBe(first)
    // This server has no runner callbacks (its port is chosen at start): the page's button
    // continues the turn; while the command still runs the turn goes on waiting.
    const turn1Done = page.locator('li.turn.completed[data-turn="1"]')
    await vi.waitFor(
      async () => {
        if (await page.locator('#continue').isVisible()) await page.locator('#continue').click()
        await turn1Done.waitFor({ timeout: 3000 })
      },
      { timeout: 40_000, interval: 100 },
    )
    expect(await text(page, 'li.turn[data-turn="1"]')).toContain('Built.')
    mock().respond(undefined)
    await expect.poll(() => liveState(page), { timeout: 15_000 }).toBe('idle')
    expect(await page.locator('li.item[data-waiting]').count()).toBe(0)

    // A second turn from the composer; the session's title is the first prompt.
    mock().enqueue({ text: 'Tests pass.' })
    await send(page, 'Now the tests')
    await page.locator('li.turn.completed[data-turn="2"]').waitFor({ timeout: 20_000 })
    await expect
      .poll(() => text(page, 'li.turn[data-turn="2"] .turn-input'))
      .toBe('askedNow the tests')
    await expect.poll(() => text(page, '#session-title')).toBe('Run the build')

    // Fork at turn 1: the fork goes on from there, without turn 2.
    await page.locator('li.turn[data-turn="1"] button.fork').click()
    await page.waitForURL((url) => url.hash.startsWith('#/sessions/') && !url.hash.endsWith(id))
    const forkId = decodeURIComponent(new URL(page.url()).hash.slice('#/sessions/'.length))
    await expect.poll(() => liveState(page), { timeout: 15_000 }).toBe('idle')
    mock().enqueue({ text: 'Another way.' })
    await send(page, 'Try another way')
    await page.locator('li.turn.completed[data-turn="1"]').waitFor({ timeout: 20_000 })
    const sent = conversation(mock().requests.at(-1))
    expect(sent[0]).toBe('user:Run the build')
    expect(sent.at(-2)).toBe('assistant:Built.')
    expect(sent.at(-1)).toBe('user:Try another way')
    expect(sent.join('\n')).not.toContain('Now the tests')

    // Cancel, behind a confirmation: the fork ends cancelled.
    await page.locator('#cancel').click()
    await page.locator('#confirm-no').click() // kept: nothing happens
    await page.locator('#cancel').click()
    await page.locator('#confirm-yes').click()
    await expect.poll(() => liveState(page), { timeout: 20_000 }).toBe('completed')
    expect(await text(page, 'li.marker.result')).toContain('cancelled')

    // Delete, behind a confirmation: back to the list, and the API no longer knows it.
    await page.locator('#delete').click()
    expect(await text(page, '#actions')).toContain('cannot be undone')
    await page.locator('#confirm-yes').click()
    await page.locator('#sessions').waitFor({ timeout: 15_000 })
    const gone = await fetch(`${server().url}/v1/sessions/${forkId}`, {
      headers: { authorization: `Bearer ${KEY}` },
    })
    expect(gone.status).toBe(404)
    // The list shows titles.
    await expect
      .poll(() => text(page, `tr[data-session-id="${id}"] td.title`), { timeout: 15_000 })
      .toBe('Run the build')

    // A plan, executed from the page.
    const { session_id: planned } = (await call('/v1/sessions', {
      permissions: { mode: 'plan' },
    })) as { session_id: string }
    mock().enqueue(
      { text: 'Intro.\n<proposed_plan>\n1. Read the code\n2. Fix the bug\n</proposed_plan>' },
      { text: 'Done as planned.' },
    )
    await page.goto(`${server().url}/ui#/sessions/${planned}`)
    await expect.poll(() => liveState(page), { timeout: 15_000 }).toBe('idle')
    await send(page, 'Plan the fix')
    await expect.poll(() => liveState(page), { timeout: 20_000 }).toBe('awaiting_plan_approval')
    await page.locator('#plan-execute').click()
    await page
      .locator('li.turn.completed', { hasText: 'Done as planned.' })
      .waitFor({ timeout: 20_000 })

    expect(urls.filter((url) => url.includes(KEY))).toEqual([])
    expect(errors).toEqual([])
    await page.close()
  })

  it('denies a tool call on a phone, with nothing wider than the screen', async () => {
    const { session_id: id } = (await call('/v1/sessions', {
      permissions: { mode: 'default' },
    })) as { session_id: string }
    mock().enqueue(
      { toolCalls: [{ id: 'c1', name: 'exec_command', arguments: '{"cmd":"rm -rf build"}' }] },
      { text: 'Understood, not removing it.' },
    )
    expect((await call(`/v1/sessions/${id}/turns`, { input: 'Clean up' })).status).toBe(
      'awaiting_approval',
    )
    const phone = await browser().newPage({ viewport: { width: 390, height: 844 }, isMobile: true })
    await openWithKey(phone, `#/sessions/${id}`)
    await expect.poll(() => liveState(phone), { timeout: 15_000 }).toBe('awaiting_approval')
    const widths = await phone.evaluate(() => [document.documentElement.scrollWidth, innerWidth])
    expect(widths[0]).toBeLessThanOrEqual(widths[1] ?? 0)
    await phone.locator('#deny').click()
    await phone
      .locator('li.turn.completed', { hasText: 'Understood, not removing it.' })
      .waitFor({ timeout: 20_000 })
    const events = await fetch(`${server().url}/v1/sessions/${id}/events`, {
      headers: { authorization: `Bearer ${KEY}` },
    }).then((res) => res.text())
    expect(events).toContain('"decision":"deny"')
    await phone.close()
  })
})
