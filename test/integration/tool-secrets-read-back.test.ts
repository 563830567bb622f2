import { describe, expect, it } from 'vitest'
import { keyedEntryEnv, useEntryWithMock } from '../support/entry-with-mock.ts'

/**
 * A session's MCP server headers are its tenant's credentials (docs/configuration.md: "Not
 * echoed back by the API"). `npm start`: every answer that shows session settings — a session,
 * a loop's step settings — shows their names with `[redacted]` values, never the values.
 */
const KEY = 'read-back-key-0123456789abcdef'
const SECRET = 'Bearer MCP-TENANT-SECRET-0123'
const fx = useEntryWithMock(
  'secret-read-back',
  keyedEntryEnv('secret-read-back', KEY, { TURNLINE_TOOL_ALLOWED_HOSTS: 'mcp.example.com' }),
)
const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
const settings = {
  mcp_servers: [
    { name: 'docs', url: 'https://mcp.example.com/mcp', headers: { authorization: SECRET } },
  ],
}
const redacted = [
  { name: 'docs', url: 'https://mcp.example.com/mcp', headers: { authorization: '[redacted]' } },
]
/** The fields of the answers read here (a session view, a loop view, a loop step's answer). */
type Settings = { mcp_servers?: unknown }
type Answer = {
  session_id: string
  config: Settings
  session: Settings
  loop_id: string
  loop: { session: Settings }
}

const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${fx.url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  expect(res.status, text).toBeLessThan(300)
  expect(text).not.toContain('MCP-TENANT-SECRET')
  return JSON.parse(text) as Answer
}

describe('MCP server headers read back', () => {
  it('a session shows them redacted', async () => {
    const { session_id: id } = await call('POST', '/v1/sessions', settings)
    const view = await call('GET', `/v1/sessions/${id}`)
    expect(view.config.mcp_servers).toEqual(redacted)
  })

  it("a loop's step settings show them redacted: created, read and paused", async () => {
    const created = await call('POST', '/v1/loops', { task: 'Tidy up.', session: settings })
    expect(created.session.mcp_servers).toEqual(redacted)
    const read = await call('GET', `/v1/loops/${created.loop_id}`)
    expect(read.session.mcp_servers).toEqual(redacted)
    const paused = await call('POST', `/v1/loops/${created.loop_id}/step`, { control: 'pause' })
    expect(paused.loop.session.mcp_servers).toEqual(redacted)
  })
})
