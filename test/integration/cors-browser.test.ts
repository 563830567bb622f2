import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { build } from 'esbuild'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium } from '../support/chromium.ts'
import { type CuttingProxy, startCuttingProxy } from '../support/cutting-proxy.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { startTestDeployment, type TestDeployment } from '../support/test-deployment.ts'

/**
 * The typed client in headless Chromium, on a page of another site (`http://app.test:<port>`,
 * mapped to 127.0.0.1 by the browser's resolver), calls a keyed deployment that lists that
 * origin in TURNLINE_CORS_ORIGINS: it creates a session, streams a turn through a proxy that
 * tears the stream (the client re-sends it with its Idempotency-Key) and follows the events
 * feed through torn connections (resumed with Last-Event-ID), reading the RateLimit headers.
 * The same page served under an origin the deployment does not list gets nothing.
 */
const KEY = 'browser-cors-key-0123456789'
const retry = { initialDelayMs: 50, maxDelayMs: 400 }

let pages: Server
let pagePort = 0
let deployment: TestDeployment
let mock: MockOpenAI
let browser: Browser
const proxies: CuttingProxy[] = []

async function clientBundle(): Promise<string> {
  const result = await build({
    entryPoints: ['client/index.ts'],
    bundle: true,
    write: false,
    format: 'iife',
    globalName: 'Turnline',
    platform: 'browser',
    target: 'es2022',
  })
  return result.outputFiles[0]?.text ?? ''
}

beforeAll(async () => {
  const script = await clientBundle()
  pages = createServer((request, response) => {
    if (request.url === '/client.js') {
      response.writeHead(200, { 'content-type': 'text/javascript' }).end(script)
    } else {
      const html = '<!doctype html><title>app</title><script src="/client.js"></script>'
      response.writeHead(200, { 'content-type': 'text/html' }).end(html)
    }
  })
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve))
  pagePort = (pages.address() as AddressInfo).port
  deployment = await startTestDeployment('cors', {
    TURNLINE_API_KEYS: `${KEY}=acme`,
    TURNLINE_CORS_ORIGINS: `http://app.test:${pagePort}`,
    TURNLINE_LIMIT_REQUESTS_PER_MINUTE: '1000',
    TURNLINE_FOLLOW_MAX_SECONDS: '1',
    TURNLINE_FOLLOW_POLL_MS: '50',
    TURNLINE_LOG: 'off',
  })
  mock = deployment.mock
  browser = await launchChromium([
    `--host-resolver-rules=MAP app.test 127.0.0.1, MAP other.test 127.0.0.1`,
  ])
}, 90_000)

afterAll(async () => {
  await browser?.close()
  for (const proxy of proxies) await proxy.close()
  await deployment?.close()
  await new Promise((resolve) => pages?.close(resolve))
})

async function pageOf(site: string): Promise<Page> {
  const page = await browser.newPage()
  await page.goto(`http://${site}:${pagePort}/`)
  await page.waitForFunction(() => 'Turnline' in window)
  return page
}

async function cutting(framesBeforeCut: number, cuts: number): Promise<CuttingProxy> {
  const proxy = await startCuttingProxy(deployment.app.url, {
    framesBeforeCut,
    cuts,
    cutDelayMs: 250,
  })
  proxies.push(proxy)
  return proxy
}

interface PageClient {
  TurnlineClient: new (options: {
    baseUrl: string
    apiKey: string
  }) => {
    createSession(): Promise<{ session_id: string }>
    streamTurn(
      id: string,
      request: { input: string },
      options: { retry: typeof retry },
    ): AsyncIterable<{ seq: number; event: { type: string } }> & {
      result(): Promise<{ status: string }>
    }
    complete(id: string): Promise<unknown>
    events(
      id: string,
      options: { follow: boolean; retry: typeof retry },
    ): AsyncIterable<{ seq: number; event: { type: string } }>
  }
}

describe('the typed client from a page of another site', { timeout: 120_000 }, () => {
  it('creates a session, streams a torn turn and follows the feed, resumed each time', async () => {
    const page = await pageOf('app.test')
    const turnProxy = await cutting(1, 1)
    const feedProxy = await cutting(2, 2)
    mock.enqueue({
      text: 'A long answer that takes a while to stream, chunk by chunk.',
      frameDelayMs: 60,
    })
    const outcome = await page.evaluate(
      async ({ api, turnUrl, feedUrl, key, retry }) => {
        const { TurnlineClient } = (window as unknown as { Turnline: PageClient }).Turnline
        const direct = new TurnlineClient({ baseUrl: api, apiKey: key })
        const { session_id: id } = await direct.createSession()
        const turn = new TurnlineClient({ baseUrl: turnUrl, apiKey: key }).streamTurn(
          id,
          { input: 'Take your time' },
          { retry },
        )
        const streamed: number[] = []
        for await (const item of turn) streamed.push(item.seq)
        const result = await turn.result()
        await direct.complete(id)
        const followed: string[] = []
        const follower = new TurnlineClient({ baseUrl: feedUrl, apiKey: key })
        for await (const item of follower.events(id, { follow: true, retry })) {
          followed.push(`${item.seq}:${item.event.type}`)
        }
        const raw = await fetch(`${api}/v1/sessions/${id}`, {
          headers: { authorization: `Bearer ${key}` },
        })
        return {
          status: result.status,
          streamed,
          followed,
          rateLimit: raw.headers.get('ratelimit-limit'),
          origin: location.origin,
        }
      },
      {
        api: deployment.app.url,
        turnUrl: turnProxy.url,
        feedUrl: feedProxy.url,
        key: KEY,
        retry,
      },
    )
    expect(outcome.origin).toBe(`http://app.test:${pagePort}`)
    expect(outcome.status).toBe('completed')
    expect(outcome.streamed).toEqual([1, 2, 3, 4])
    // The turn ran once although its stream was torn and sent again.
    expect(mock.requests).toHaveLength(1)
    expect(turnProxy.cutsMade).toBe(1)
    expect(turnProxy.sent.some((text) => /^idempotency-key: /im.test(text))).toBe(true)
    // The feed was torn twice and resumed after the last event each time, each event once.
    expect(feedProxy.cutsMade).toBe(2)
    expect(feedProxy.sent.some((text) => /^last-event-id: \d+\r$/im.test(text))).toBe(true)
    expect(outcome.followed.map((entry) => Number(entry.split(':')[0]))).toEqual(
      outcome.followed.map((_, index) => index),
    )
    expect(outcome.followed.at(-1)).toMatch(/:thread\.completed$/)
    // RateLimit headers are exposed to the page.
    expect(outcome.rateLimit).toBe('1000')
    await page.close()
  })

  it('gives a page of an origin it does not list nothing', async () => {
    const page = await pageOf('other.test')
    const failure = await page.evaluate(
      async ({ api, key }) => {
        const { TurnlineClient } = (window as unknown as { Turnline: PageClient }).Turnline
        try {
          await new TurnlineClient({ baseUrl: api, apiKey: key }).createSession()
          return 'created'
        } catch (error) {
          return (error as Error).name
        }
      },
      { api: deployment.app.url, key: KEY },
    )
    expect(failure).toBe('TurnlineConnectionError')
    await page.close()
  })
})
