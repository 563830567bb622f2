import { describe, expect, it } from 'vitest'
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
    await fetches.mcp('https://mcp.internal:8443/mcp')
    expect(calls.map((c) => c.via)).toEqual([
      'trusted',
      'trusted',
      'checked',
      'checked',
      'checked',
      'trusted',
    ])
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
})
