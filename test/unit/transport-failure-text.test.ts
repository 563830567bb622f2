import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { TurnlineError } from '../../src/contract/errors.ts'
import { EgressRefused, transportFailureText } from '../../src/contract/transport-failure.ts'
import { callHttpTool } from '../../src/core/tools/http-tool-call.ts'
import { localLookupTool, localToolPolicy } from '../support/local-http-tool.ts'

/** A port that nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/**
 * A request that got no answer is described in Turnline's words: the runtime's own text (Node's
 * `fetch failed`, Deno's `error sending request …`, workerd's `Network connection lost.`) would
 * make a stored tool output depend on where the turn ran.
 */
describe('transportFailureText', () => {
  it("keeps Turnline's own refusals and replaces the runtime's texts", () => {
    expect(transportFailureText(new EgressRefused('10.0.0.1:80 refused: a private network'))).toBe(
      '10.0.0.1:80 refused: a private network',
    )
    expect(transportFailureText(new TurnlineError('tool_error', 'MCP server x: said no'))).toBe(
      'MCP server x: said no',
    )
    const generic = 'the connection failed or broke off before a complete answer arrived'
    expect(transportFailureText(new TypeError('fetch failed'))).toBe(generic)
    expect(transportFailureText(new TypeError('error sending request for url (…)'))).toBe(generic)
    expect(transportFailureText('Network connection lost.')).toBe(generic)
  })

  it('is what an HTTP tool on a closed port reports to the model', async () => {
    const port = await closedPort()
    const result = await callHttpTool(
      localToolPolicy(port, 5000),
      { tenant: 't', sessionId: 's', toolCallId: 'c', now: Date.now() },
      localLookupTool(port),
      '{}',
    )
    expect(result).toEqual({
      ok: false,
      output:
        'tool lookup could not be reached: the connection failed or broke off before a complete answer arrived',
    })
  })
})
