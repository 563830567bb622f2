import { createHmac } from 'node:crypto'
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../support/chromium.ts'
import { echoTool } from '../support/engine-deps.ts'
import { type FreezableProxy, startFreezableProxy } from '../support/freezable-proxy.ts'
import { startHookReceiver } from '../support/hook-receiver.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { screenshotStats } from '../support/screenshot-pixels.ts'
import { type ServerProcess, startServerProcess } from '../support/server-process.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'
import { startToolReceiver } from '../support/tool-receiver.ts'

/**
 * The timeline viewer (`GET /ui`) in headless Chromium against `npm start`'s entry on the local
 * services (moto S3, Upstash on redis-server), the mock OpenAI model and the in-process sandbox
 * runner. The browser reaches the server through a TCP proxy that the test cuts to drop the
 * live stream; the server's follow window is 3 s, so the feed is also reopened in between.
 */
let dir = ''
let backends: TestBackends
let mock: MockOpenAI
let server: ServerProcess
let proxy: FreezableProxy
let browser: Browser
let receiver: Awaited<ReturnType<typeof startToolReceiver>>
let hooks: Awaited<ReturnType<typeof startHookReceiver>>
const TOOL_SECRET = 'viewer-tool-secret-0123456789abcdef'

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-viewer-'))
  await chmod(dir, 0o711) // the sandbox user must reach the workspaces
  backends = await startTestBackends('viewer')
  ;({ mock } = backends)
  // A session HTTP tool's endpoint (the server signs each call with the tenant's key).
  receiver = await startToolReceiver(
    createHmac('sha256', TOOL_SECRET).update('local').digest('hex'),
  )
  // A session's HTTP hooks' endpoint (signed with the same tenant key).
  hooks = await startHookReceiver(createHmac('sha256', TOOL_SECRET).update('local').digest('hex'))
  server = await startServerProcess(
    backends.env({
      TURNLINE_TOOL_SECRET: TOOL_SECRET,
      TURNLINE_TOOL_ALLOWED_HOSTS: `${receiver.host},${hooks.host}`,
      TURNLINE_DATA_DIR: join(dir, 'data'),
      TURNLINE_FOLLOW_MAX_SECONDS: '3',
      TURNLINE_FOLLOW_POLL_MS: '100',
    }),
  )
  proxy = await startFreezableProxy(server.url)
  browser = await launchChromium()
}, 90_000)

afterAll(async () => {
  await browser?.close()
  await proxy?.close()
  await server?.stop()
  await backends?.close()
  await receiver?.close()
  await hooks?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

async function call(path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const json = (await res.json()) as Record<string, unknown>
  expect(res.status, JSON.stringify(json)).toBeLessThan(300)
  return json
}

const turn = (id: string, input: string) => call(`/v1/sessions/${id}/turns`, { input })
const text = async (page: Page, selector: string) =>
  (await page.locator(selector).textContent()) ?? ''
const attr = (page: Page, selector: string, name: string) =>
  page.locator(selector).getAttribute(name)

// gpt-4o-mini: $0.15 / $0.075 / $0.60 per million input / cached input / output tokens (the
// server's price table).
const costOf = (input: number, output: number, cached = 0) =>
  (input - cached) * 0.15e-6 + cached * 0.075e-6 + output * 0.6e-6

describe('the timeline viewer in Chromium', { timeout: 180_000 }, () => {
  it('lists the session, shows its timeline live and resumes a dropped stream', async () => {
    const { session_id: id } = (await call('/v1/sessions', {})) as { session_id: string }
    mock.enqueue(
      {
        toolCalls: [{ id: 'call_1', name: 'exec_command', arguments: '{"cmd":"echo viewer-42"}' }],
        usage: { input_tokens: 1000, output_tokens: 50 },
      },
      {
        text: 'The command printed <b>viewer-42</b>.',
        usage: { input_tokens: 1200, output_tokens: 30 },
      },
    )
    expect((await turn(id, 'Run echo')).status).toBe('completed')

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    const feeds: { lastEventId: string | undefined }[] = []
    page.on('request', (request) => {
      if (!request.url().includes('/events')) return
      void request.allHeaders().then((h) => feeds.push({ lastEventId: h['last-event-id'] }))
    })

    // The list shows the session; its link opens the timeline.
    await page.goto(`${proxy.url}/ui`)
    const row = page.locator(`tr[data-session-id="${id}"]`)
    await row.waitFor({ timeout: 15_000 })
    expect((await row.locator('td').allTextContents()).slice(1, 3)).toEqual(['active', '1'])
    // The list refreshes itself: a session created now appears without a reload.
    const { session_id: later } = (await call('/v1/sessions', {
      workspace: 'default',
    })) as { session_id: string }
    await page.locator(`tr[data-session-id="${later}"]`).waitFor({ timeout: 20_000 })
    await row.locator('a').click()
    await page.locator('li.turn.completed[data-turn="1"]').waitFor({ timeout: 15_000 })

    // The turn, its command, the command's output under it, the answer (as text), the cost.
    const turn1 = await text(page, 'li.turn[data-turn="1"]')
    expect(turn1).toContain('exec_command')
    expect(turn1).toContain('echo viewer-42')
    expect(await text(page, 'li.turn[data-turn="1"] .item-outputs pre.tool-output')).toBe(
      'viewer-42',
    )
    expect(turn1).toContain('The command printed <b>viewer-42</b>.')
    expect(await page.locator('li.turn b').count()).toBe(0) // model text is never markup
    expect(turn1).toContain('2,200 in · 80 out tokens')
    const cost1 = `$${costOf(2200, 80).toFixed(6)}`
    expect(await text(page, 'li.turn[data-turn="1"] .cost')).toBe(cost1)
    await expect.poll(() => text(page, '#fact-cost'), { timeout: 15_000 }).toBe(cost1)
    expect(await attr(page, '#stream', 'data-state')).toBe('live')

    // A new turn appears live, without a reload.
    // Its input mostly read from the provider's prompt cache: priced at the cached rate.
    mock.enqueue({
      text: 'Second answer, live.',
      usage: { input_tokens: 3000, cached_input_tokens: 2048, output_tokens: 10 },
    })
    await turn(id, 'Say more')
    await page.locator('li.turn.completed[data-turn="2"]').waitFor({ timeout: 15_000 })
    const turn2 = await text(page, 'li.turn[data-turn="2"]')
    expect(turn2).toContain('Second answer, live.')
    expect(turn2).toContain('3,000 in (2,048 cached) · 10 out tokens')
    const cost2 = costOf(3000, 10, 2048)
    expect(await text(page, 'li.turn[data-turn="2"] .cost')).toBe(`$${cost2.toFixed(6)}`)
    await expect
      .poll(() => text(page, '#fact-cost'), { timeout: 15_000 })
      .toBe(`$${(costOf(2200, 80) + cost2).toFixed(6)}`)

    // The server's 3 s follow window ended the stream at least once; the page reopened it.
    await expect.poll(() => feeds.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2)

    // Cut the connection mid-stream, run a turn while it is down, and the page catches up.
    const before = Number(await attr(page, '#timeline', 'data-last-seq'))
    const opened = proxy.connections
    proxy.cut()
    mock.enqueue({
      text: 'Third answer, after the cut.',
      usage: { input_tokens: 10, output_tokens: 5 },
    })
    await turn(id, 'Once more')
    await page
      .locator('li.turn.completed', { hasText: 'Third answer, after the cut.' })
      .waitFor({ timeout: 20_000 })
    expect(proxy.connections).toBeGreaterThan(opened)
    expect(feeds.map((f) => f.lastEventId)).toContain(String(before))

    // Every event once: as many applied as the session has, one card per turn, one per item.
    const session = await call(`/v1/sessions/${id}`)
    expect(session.model).toBe('gpt-4o-mini')
    expect(session.price).toEqual({
      input: 0.15 / 1e6,
      cached_input: 0.075 / 1e6,
      output: 0.6 / 1e6,
    })
    const events = Number(session.last_seq) + 1
    expect(Number(await attr(page, '#timeline', 'data-event-count'))).toBe(events)
    expect(Number(await attr(page, '#timeline', 'data-last-seq'))).toBe(events - 1)
    expect(await page.locator('li.turn').count()).toBe(3)
    const itemIds = await page
      .locator('[data-item-id]')
      .evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-item-id')))
    expect(new Set(itemIds).size).toBe(itemIds.length)
    expect(await page.locator('li.marker.start').count()).toBe(1)

    // A manual compaction shows as a boundary between the turns.
    mock.enqueue({ text: 'Summary: echo ran, three answers given.' })
    await call(`/v1/sessions/${id}/compact`, {})
    const boundary = page.locator('li.marker.boundary')
    await boundary.waitFor({ timeout: 15_000 })
    expect(await boundary.textContent()).toContain('manual compaction, local mode')

    // Completing the thread shows the result, and the feed ends.
    await call(`/v1/sessions/${id}/complete`, {})
    await page.locator('li.marker.result').waitFor({ timeout: 15_000 })
    expect(await text(page, 'li.marker.result')).toContain('Third answer, after the cut.')
    await expect.poll(() => attr(page, '#stream', 'data-state'), { timeout: 15_000 }).toBe('ended')
    await expect.poll(() => text(page, '#fact-status'), { timeout: 15_000 }).toBe('completed')
    await page.evaluate(() => window.scrollTo(0, 0))
    expect(errors).toEqual([])
    await checkScreenshot(page)

    // On a phone: the same timeline, nothing wider than the screen. Its feed is served twice
    // over (a server that repeats itself): events already applied are dropped.
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true })
    await phone.route('**/events?follow=1', async (route) => {
      const response = await route.fetch()
      const body = await response.text()
      await route.fulfill({ response, body: body + body })
    })
    await phone.goto(`${proxy.url}/ui#/sessions/${id}`)
    await phone.locator('li.marker.result').waitFor({ timeout: 15_000 })
    await expect.poll(() => attr(phone, '#stream', 'data-state'), { timeout: 15_000 }).toBe('ended')
    const total = Number((await call(`/v1/sessions/${id}`)).last_seq) + 1
    expect(Number(await attr(phone, '#timeline', 'data-event-count'))).toBe(total)
    expect(await phone.locator('li.turn').count()).toBe(3)
    expect(await phone.locator('li.marker.result').count()).toBe(1)
    const widths = await phone.evaluate(() => [document.documentElement.scrollWidth, innerWidth])
    expect(widths[0]).toBeLessThanOrEqual(widths[1] ?? 0)
    await phone.close()
    await page.close()
  })

  it("shows a long input's preview and opens the whole text it was kept as", async () => {
    const { session_id: id } = (await call('/v1/sessions', {})) as { session_id: string }
    const log = Array.from({ length: 4000 }, (_, n) => `entry ${n} ${'z'.repeat(40)}`).join('\n')
    mock.enqueue({ text: 'Read.' })
    expect((await turn(id, log)).status).toBe('completed')
    // A follow-up as long, kept when it was accepted and applied by the next turn.
    const steer = Array.from({ length: 3000 }, (_, n) => `steer ${n} ${'q'.repeat(40)}`).join('\n')
    await call(`/v1/sessions/${id}/intents`, { text: steer })
    mock.enqueue({ text: 'Steered.' })
    expect((await call(`/v1/sessions/${id}/turns`, {})).status).toBe('completed')

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(`${proxy.url}/ui#/sessions/${id}`)
    const link = page.locator('li.turn[data-turn="1"] .turn-input a.artifact-link')
    await link.waitFor({ timeout: 15_000 })
    const size = Buffer.byteLength(log)
    expect(await link.textContent()).toMatch(
      new RegExp(`^out_[0-9a-f]{32} \\(${size.toLocaleString('en-US')} bytes, 4,000 lines\\)$`),
    )
    const asked = await text(page, 'li.turn[data-turn="1"] .turn-input')
    expect(asked).toContain('entry 0 ')
    expect(asked).toContain('kept whole as artifact')
    expect(asked).not.toContain('entry 2000 ')
    const followed = page.locator('li.turn[data-turn="2"] .turn-input a.artifact-link')
    await followed.waitFor({ timeout: 15_000 })
    expect(await followed.textContent()).toMatch(
      new RegExp(
        `^out_[0-9a-f]{32} \\(${Buffer.byteLength(steer).toLocaleString('en-US')} bytes, 3,000 lines\\)$`,
      ),
    )
    const steered = await text(page, 'li.turn[data-turn="2"] .turn-input')
    expect(steered).toContain('Follow-up: steer 0 ')
    expect(steered).not.toContain('steer 1500 ')
    // The link opens the whole text (fetched with the page's credentials) in a new tab.
    const [opened] = await Promise.all([page.context().waitForEvent('page'), link.click()])
    await opened.waitForLoadState()
    const whole = await opened.evaluate(() => document.body.textContent ?? '')
    expect(whole.trim()).toBe(log)
    expect(errors).toEqual([])
    await opened.close()
    await page.close()
  })

  it("links every output kept whole, a command's included, and opens it", async () => {
    // An HTTP tool answer and a command's output, each over the inline limit (64 KiB).
    const answer = Array.from({ length: 3000 }, (_, n) => `answer ${n} ${'h'.repeat(40)}`).join(
      '\n',
    )
    receiver.setReply(() => ({ body: answer }))
    const tool = echoTool(receiver.url)
    const { session_id: id } = (await call('/v1/sessions', { tools: [tool] })) as {
      session_id: string
    }
    const printed =
      'awk \'BEGIN { for (i = 0; i < 4000; i++) printf "printed %05d %s\\n", i, "pppppppppppppppppppppppppppppp" }\''
    mock.enqueue(
      { toolCalls: [{ id: 'call_http', name: 'lookup', arguments: '{"q":"all"}' }] },
      {
        toolCalls: [
          {
            id: 'call_cmd',
            name: 'exec_command',
            arguments: JSON.stringify({ cmd: printed, yield_time_ms: 20_000 }),
          },
        ],
      },
      { text: 'Both read.' },
    )
    expect((await turn(id, 'Look it up, then print')).status).toBe('completed')
    const listed = (await call(`/v1/sessions/${id}/artifacts`)) as {
      outputs: { item_id: string; tool_call_id: string; artifact_id: string; size: number }[]
    }
    expect(listed.outputs.map((o) => o.tool_call_id)).toEqual(['call_http', 'call_cmd'])

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    const listings: string[] = []
    page.on('request', (request) => {
      if (request.url().includes(`/sessions/${id}/artifacts?`)) listings.push(request.url())
    })
    await page.goto(`${proxy.url}/ui#/sessions/${id}`)
    for (const kept of listed.outputs) {
      const link = page.locator(`[data-item-id="${kept.item_id}"] .output-artifact a.artifact-link`)
      await link.waitFor({ timeout: 30_000 })
      await expect
        .poll(() => link.textContent(), { timeout: 30_000 })
        .toBe(
          `${kept.artifact_id} (${kept.size.toLocaleString('en-US')} bytes, ${(kept.tool_call_id === 'call_http' ? 3000 : 4000).toLocaleString('en-US')} lines)`,
        )
    }
    // The command's output item shows its spool and the link; the link opens the whole output.
    const command = listed.outputs[1]
    const commandItem = page.locator(`[data-item-id="${command?.item_id}"]`)
    expect(await commandItem.textContent()).toContain('spooled in the workspace: ')
    const [opened] = await Promise.all([
      page.context().waitForEvent('page'),
      commandItem.locator('a.artifact-link').click(),
    ])
    await opened.waitForLoadState()
    const whole = await opened.evaluate(() => document.body.textContent ?? '')
    expect(whole).toContain('printed 00000 ppp')
    expect(whole).toContain('printed 03999 ppp')
    expect(whole.trim().split('\n')).toHaveLength(4000)
    await opened.close()

    // A command kept while the page is open gets its link live.
    mock.enqueue(
      {
        toolCalls: [
          {
            id: 'call_live',
            name: 'exec_command',
            arguments: JSON.stringify({
              cmd: printed.replace('printed', 'live'),
              yield_time_ms: 20_000,
            }),
          },
        ],
      },
      { text: 'Printed live.' },
    )
    await turn(id, 'Print again')
    const live = page.locator('li.turn[data-turn="2"] .output-artifact a.artifact-link')
    await live.waitFor({ timeout: 30_000 })
    // Read again from where the first listing stopped, not from the session's start.
    expect(listings[0]).not.toContain('cursor=')
    expect(listings.slice(1).every((url) => /[?&]cursor=[0-9]+/.test(url))).toBe(true)
    expect(listings.length).toBeGreaterThan(1)
    expect(await live.textContent()).toMatch(/^out_[0-9a-f]{32} \([0-9,]+ bytes, 4,000 lines\)$/)
    expect(errors).toEqual([])
    await page.close()
  })

  it('links the hook answers kept whole in their turn (a session_start one under the thread start), and one kept while the page is open', async () => {
    // post_tool_use and stop hooks answering over the inline limit (64 KiB), 2,000 lines each.
    const answer = (mark: string) =>
      Array.from({ length: 2000 }, (_, n) => `${mark} ${n} ${'k'.repeat(40)}`).join('\n')
    hooks.setReply((hook) => ({ body: answer(hook.path.slice(1)) }))
    receiver.setReply(() => ({ body: 'short' }))
    const { session_id: id } = (await call('/v1/sessions', {
      tools: [echoTool(receiver.url)],
      hooks: [
        { event: 'post_tool_use', type: 'http', name: 'audit', url: hooks.url('/post') },
        { event: 'stop', type: 'http', name: 'review', url: hooks.url('/stop') },
        { event: 'session_start', type: 'http', name: 'boot', url: hooks.url('/start') },
      ],
    })) as { session_id: string }
    mock.enqueue(
      { toolCalls: [{ id: 'call_hooked', name: 'lookup', arguments: '{"q":"x"}' }] },
      { text: 'Hooked.' },
    )
    expect((await turn(id, 'Look it up')).status).toBe('completed')
    const listed = (await call(`/v1/sessions/${id}/artifacts`)) as {
      outputs: { kind: string; event: string; artifact_id: string; size: number }[]
    }
    expect(listed.outputs.map((o) => [o.kind, o.event])).toEqual([
      ['hook_answer', 'session_start'],
      ['hook_answer', 'post_tool_use'],
      ['hook_answer', 'stop'],
    ])

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(`${proxy.url}/ui#/sessions/${id}`)
    const links = page.locator('li.turn[data-turn="1"] .hook-answer')
    await expect.poll(() => links.count(), { timeout: 30_000 }).toBe(2)
    const [start, post, stop] = listed.outputs
    // Kept as the session was created, before any turn: under the thread's start.
    const started = page.locator('li.marker.start .hook-answer[data-hook-event="session_start"]')
    expect(await started.textContent()).toBe(
      `session_start hook boot, whole answer: ${start?.artifact_id} (${start?.size.toLocaleString('en-US')} bytes, 2,000 lines)`,
    )
    expect(await links.nth(0).textContent()).toBe(
      `post_tool_use hook audit (call call_hooked), whole answer: ${post?.artifact_id} (${post?.size.toLocaleString('en-US')} bytes, 2,000 lines)`,
    )
    expect(await links.nth(1).textContent()).toBe(
      `stop hook review, whole answer: ${stop?.artifact_id} (${stop?.size.toLocaleString('en-US')} bytes, 2,000 lines)`,
    )
    const [opened] = await Promise.all([
      page.context().waitForEvent('page'),
      links.nth(1).locator('a.artifact-link').click(),
    ])
    await opened.waitForLoadState()
    const whole = await opened.evaluate(() => document.body.textContent ?? '')
    expect(whole.trim()).toBe(answer('stop'))
    await opened.close()

    // A turn while the page is open: its stop hook's kept answer gets its link live.
    hooks.setReply((hook) => ({ body: answer(`again-${hook.path.slice(1)}`) }))
    mock.enqueue({ text: 'Again.' })
    expect((await turn(id, 'Once more')).status).toBe('completed')
    const again = page.locator('li.turn[data-turn="2"] .hook-answer[data-hook-event="stop"]')
    await again.waitFor({ timeout: 30_000 })
    expect(await again.textContent()).toMatch(/^stop hook review, whole answer: out_[0-9a-f]{32} /)
    expect(errors).toEqual([])
    await page.close()
  })
})

/**
 * The screenshot must show the page as designed, not just something: the dark top bar, the
 * green left edge of a completed turn card, the tool output box with text in it, many colors.
 * Regions come from the elements' boxes, so font metrics do not matter; a blank page, a page
 * without its stylesheet or an empty timeline fails.
 */
async function checkScreenshot(page: Page) {
  const png = await page.screenshot({ type: 'png' })
  await mkdir(join(import.meta.dirname, '../../.tmp'), { recursive: true })
  await writeFile(join(import.meta.dirname, '../../.tmp/viewer-screenshot.png'), png)
  const box = async (selector: string) => {
    const found = await page.locator(selector).first().boundingBox()
    if (!found) throw new Error(`${selector} is not on screen`)
    return found
  }
  const bar = await box('header.top')
  const card = await box('li.turn[data-turn="1"]')
  const output = await box('li.turn[data-turn="1"] pre.tool-output')
  const stats = await screenshotStats(browser, png, {
    bar: { ...bar, color: [0x1d, 0x23, 0x30] },
    edge: {
      x: card.x + 0.5,
      y: card.y + 8,
      width: 3,
      height: card.height - 16,
      color: [0x1f, 0x7a, 0x3a],
    },
    // the start of the box, where `viewer-42` is written
    output: { ...output, width: Math.min(output.width, 140), color: [0xf0, 0xf2, 0xf5] },
  })
  expect([stats.width, stats.height]).toEqual([1280, 900])
  expect(stats.colors).toBeGreaterThan(40)
  expect(stats.regions.bar?.match).toBeGreaterThan(0.6)
  expect(stats.regions.edge?.match).toBeGreaterThan(0.8)
  expect(stats.regions.output?.match).toBeGreaterThan(0.5)
  expect(stats.regions.output?.dark).toBeGreaterThan(0.01)
}
