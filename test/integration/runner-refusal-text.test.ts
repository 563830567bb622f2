import { beforeAll, describe, expect, it } from 'vitest'
import { keyedEntryEnv, useEntryWithMock } from '../support/entry-with-mock.ts'
import { closedPort } from '../support/hook-receiver.ts'
import { jsonCaller } from '../support/json-call.ts'

/**
 * With several tenants a command runs only on a runner that reports bubblewrap, and is refused
 * otherwise (docs/configuration.md, TURNLINE_RUNNER_URL). The refusal is the command's tool
 * output, which the tenant reads in its events: `npm start` with a runner URL nothing answers
 * on, a model that runs a command — the refusal says why without the runner's address, which
 * the start warning gives the operator.
 */
const KEY = 'refusal-key-0123456789abcdef'
const env = keyedEntryEnv('runner-refusal-text', KEY)
let port: number
beforeAll(async () => {
  port = await closedPort()
  env.TURNLINE_RUNNER_URL = `http://127.0.0.1:${port}`
})
const fx = useEntryWithMock('runner-refusal-text', env)
const call = jsonCaller({ authorization: `Bearer ${KEY}` })

describe('a command refused for want of a sandbox', () => {
  it("says why to the tenant without the runner's address", async () => {
    const { session_id: id } = (await call(fx.url, 'POST', '/v1/sessions', {})).json()
    fx.mock.enqueue(
      { toolCalls: [{ id: 'c1', name: 'exec_command', arguments: '{"cmd":"echo hi"}' }] },
      { text: 'done' },
    )
    await call(fx.url, 'POST', `/v1/sessions/${id}/turns`, { input: 'run it' })
    const events = (await call(fx.url, 'GET', `/v1/sessions/${id}/events`)).text
    expect(events).toContain('command refused: the sandbox runner did not report a sandbox')
    expect(events).not.toContain(`:${port}`)
    // The operator's start warning names it.
    expect(fx.server.output()).toContain(`the sandbox runner at http://127.0.0.1:${port}`)
  })
})
