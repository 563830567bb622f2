import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runDenoScript } from '../support/deno-script.ts'
import { startTestDns, type TestDns } from '../support/dns-server.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'

/**
 * The Deno entry's checked fetch itself, in Deno (test/support/deno-checked-fetch-script.ts),
 * against real servers and a real DNS server: a redirect is a new connection, checked like the
 * first (an allowed host cannot send the call to a refused one); the resolvers of
 * TURNLINE_EGRESS_DNS are asked in order until one answers; a name the deny list names makes
 * its addresses refused under any other name.
 */
let dns: TestDns
let target: RunningServer
let redirector: RunningServer
let targetPort = 0
let redirectorPort = 0
let hits = 0

beforeAll(async () => {
  dns = await startTestDns({
    'rebound.example': ['127.0.0.1'],
    'mirror.example': ['127.0.0.1'],
    'db.named-internal.example': ['1.2.4.4'],
    'alias.example': ['1.2.4.4'],
  })
  target = await serveApp(
    new Hono().all('*', (c) => {
      hits += 1
      return c.text('internal secret')
    }),
  )
  redirector = await serveApp(new Hono().all('*', (c) => c.redirect(c.req.query('to') ?? '/', 302)))
  targetPort = Number(new URL(target.url).port)
  redirectorPort = Number(new URL(redirector.url).port)
})

afterAll(async () => {
  await dns?.close()
  await target?.close()
  await redirector?.close()
})

/** The script's results, one per URL. */
async function inDeno(variables: Record<string, string>, urls: string[]) {
  const run = await runDenoScript(
    'test/support/deno-checked-fetch-script.ts',
    // The Deno entry's own permissions (undici reads the environment).
    ['--allow-net', '--allow-read', '--allow-env', '--allow-sys=networkInterfaces'],
    [JSON.stringify(variables), ...urls],
  )
  expect(run.code, run.stderr).toBe(0)
  return JSON.parse(run.stdout) as Record<string, unknown>[]
}

describe("the Deno entry's checked fetch", () => {
  it('checks every redirect: an allowed host cannot send the call to a refused one', async () => {
    const via = (to: string) => `http://127.0.0.1:${redirectorPort}/?to=${encodeURIComponent(to)}`
    const loopback = `http://127.0.0.1:${targetPort}/`
    const rebound = `http://rebound.example:${targetPort}/`
    const results = await inDeno(
      {
        TURNLINE_EGRESS_ALLOW: `127.0.0.1:${redirectorPort},mirror.example:${targetPort}`,
        TURNLINE_EGRESS_DNS: dns.address,
      },
      [
        `manual:${via(loopback)}`,
        via(loopback),
        via(rebound),
        `http://mirror.example:${targetPort}/`,
      ],
    )
    expect(results[0]).toMatchObject({ status: 302 })
    expect(results[1]).toEqual({
      error: 'EgressRefused',
      message: `127.0.0.1:${targetPort} refused: 127.0.0.1 is a loopback address`,
    })
    expect(results[2]).toEqual({
      error: 'EgressRefused',
      message: `rebound.example:${targetPort} refused: rebound.example resolves to 127.0.0.1, a loopback address`,
    })
    // The target itself is reached only by the name the operator allows.
    expect(results[3]).toEqual({ status: 200, body: 'internal secret' })
    expect(hits).toBe(1)
  })

  it('asks the resolvers in order until one answers, and refuses addresses of denied names', async () => {
    const results = await inDeno(
      {
        // Nothing answers on the first: the second one does.
        TURNLINE_EGRESS_DNS: `127.0.0.1:9,${dns.address}`,
        TURNLINE_EGRESS_ALLOW: `mirror.example:${targetPort}`,
        TURNLINE_EGRESS_DENY: 'db.named-internal.example',
      },
      [`http://mirror.example:${targetPort}/`, 'http://alias.example/'],
    )
    expect(results[0]).toEqual({ status: 200, body: 'internal secret' })
    expect(results[1]).toEqual({
      error: 'EgressRefused',
      message:
        'alias.example:80 refused: alias.example resolves to 1.2.4.4, an address of db.named-internal.example, named internal by TURNLINE_EGRESS_DENY',
    })
  })
})
