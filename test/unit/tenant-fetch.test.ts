import { describe, expect, it } from 'vitest'
import { MCP_PROTOCOL_BYTES } from '../../adapters/mcp/mcp-answer-limit.ts'
import { ConfigError, parseEnv } from '../../functions/env-config.ts'
import { tenantFetches } from '../../functions/tenant-fetch.ts'

/** Which fetch a tenant-directed call goes through, by what the operator named. */
function recorder() {
  const calls: { via: string; url: string }[] = []
  const make =
    (via: string): typeof fetch =>
    async (input) => {
      calls.push({ via, url: input instanceof Request ? input.url : input.toString() })
      return new Response('ok')
    }
  return { calls, make }
}

const config = (env: Record<string, string> = {}) => parseEnv(env)

describe('the fetch of tenant-directed calls', () => {
  it('sends named hosts as named and every other host through the checked fetch', async () => {
    const { calls, make } = recorder()
    const hosts = ['tools.example.com', '127.0.0.1:9999', '*']
    const fetches = tenantFetches(
      config({
        TURNLINE_MCP_SERVERS: JSON.stringify([
          { name: 'docs', url: 'https://mcp.internal:8443/mcp' },
        ]),
      }),
      hosts,
      { checkedFetch: () => make('checked') },
      make('trusted'),
    )
    await fetches.tools('https://TOOLS.example.com/x')
    await fetches.tools('http://127.0.0.1:9999/x')
    await fetches.tools('http://127.0.0.1:9998/x')
    await fetches.tools(new Request('https://elsewhere.example/x'))
    await fetches.tools('https://mcp.internal:8443/mcp')
    await fetches.mcp.operatorFetch('https://mcp.internal:8443/mcp')
    await fetches.mcp.operatorFetch('https://TOOLS.example.com/mcp')
    await fetches.mcp.operatorFetch('https://elsewhere.example/mcp')
    expect(calls.map((c) => c.via)).toEqual([
      'trusted',
      'trusted',
      'checked',
      'checked',
      'checked',
      'trusted',
      'trusted',
      'checked',
    ])
  })

  it("checks a session's own MCP server on a deployment server's host as any other host", async () => {
    // The operator named mcp.internal for its own server (and its credentials): a tenant that
    // points a session's server at it (allowed under *) reached it unchecked, beside the
    // deployment server's allowed_tools, and any internal service sharing that host.
    const { calls, make } = recorder()
    const fetches = tenantFetches(
      config({
        TURNLINE_MCP_SERVERS: JSON.stringify([
          { name: 'docs', url: 'https://mcp.internal:8443/mcp' },
        ]),
      }),
      ['tools.example.com', '*'],
      { checkedFetch: () => make('checked') },
      make('trusted'),
    )
    await fetches.mcp.fetch('https://mcp.internal:8443/mcp')
    await fetches.mcp.fetch('https://tools.example.com/mcp')
    await fetches.mcp.fetch('https://elsewhere.example/mcp')
    await fetches.mcp.operatorFetch('https://mcp.internal:8443/mcp')
    expect(calls.map((c) => c.via)).toEqual(['checked', 'trusted', 'checked', 'trusted'])
  })

  it('refuses * at start where nothing can check the addresses a call connects to (an entry without a checked fetch)', () => {
    const { make } = recorder()
    expect(() => tenantFetches(config(), ['*'], {}, make('trusted'))).toThrow(ConfigError)
    expect(() => tenantFetches(config(), ['*'], {}, make('trusted'))).toThrow(
      /TURNLINE_TOOL_ALLOWED_HOSTS: \* lets tenants choose any host/,
    )
    // Named hosts only: nothing to check beyond the list.
    expect(() => tenantFetches(config(), ['tools.example.com'], {}, make('t'))).not.toThrow()
  })

  it('on a public-only platform (a Worker) still refuses internal IP literals', async () => {
    const { calls, make } = recorder()
    const fetches = tenantFetches(
      config({ TURNLINE_EGRESS_ALLOW: '10.1.2.3:8080' }),
      ['*'],
      { publicOnlyFetch: true },
      make('platform'),
    )
    for (const url of ['http://127.0.0.1/', 'http://[::ffff:a9fe:a9fe]/', 'http://10.0.0.1/']) {
      await expect(fetches.tools(url)).rejects.toThrow(/refused/)
    }
    await fetches.tools('https://api.example.com/')
    await fetches.tools('http://10.1.2.3:8080/')
    expect(calls.map((c) => c.url)).toEqual(['https://api.example.com/', 'http://10.1.2.3:8080/'])
  })

  it("bounds an MCP server's answer: a body without end fails past the kept output's size", async () => {
    const MiB = 1024 * 1024
    const piece = new Uint8Array(64 * 1024)
    let sent = 0
    let cancelled = false
    const endless: typeof fetch = async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            // Ends at 8 MiB, far past the bound (a server without one would go on).
            if (sent >= 8 * MiB) return controller.close()
            sent += piece.byteLength
            controller.enqueue(piece)
          },
          cancel() {
            cancelled = true
          },
        }),
        { headers: { 'content-type': 'application/json' } },
      )
    const env = {
      TURNLINE_TOOL_MAX_OUTPUT_BYTES: String(MiB),
      TURNLINE_TOOL_MAX_RESPONSE_BYTES: '1024',
    }
    const fetches = tenantFetches(config(env), ['mcp.example'], {}, endless)
    const answer = await fetches.mcp.fetch('https://mcp.example/mcp', { method: 'POST' })
    await expect(answer.text()).rejects.toMatchObject({
      code: 'tool_error',
      details: { max_bytes: MiB + MCP_PROTOCOL_BYTES },
    })
    expect(cancelled).toBe(true)
    expect(sent).toBeLessThanOrEqual(MiB + MCP_PROTOCOL_BYTES + 2 * piece.byteLength)
    // A declared length past the bound is refused before any of the body is read.
    const declared: typeof fetch = async () =>
      new Response('{}', { headers: { 'content-length': String(3 * MiB) } })
    const refused = tenantFetches(config(env), ['mcp.example'], {}, declared)
    await expect(refused.mcp.fetch('https://mcp.example/mcp')).rejects.toMatchObject({
      code: 'tool_error',
    })
    // Tools' fetch is not this one (their answers are capped as they are read: output-capture.ts).
    const small = tenantFetches(
      config(env),
      ['mcp.example'],
      {},
      async () => new Response('{"ok":1}'),
    )
    expect(await (await small.mcp.fetch('https://mcp.example/mcp')).json()).toEqual({ ok: 1 })
  })
})
