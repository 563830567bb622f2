import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { messageReply } from '../support/anthropic-frames.ts'
import { type ProviderReplay, startProviderReplay } from '../support/provider-replay.ts'
import type { RuntimeProcess } from '../support/runtime-process.ts'
import { startDeno, startWorkerd } from '../support/runtimes.ts'

/**
 * The Anthropic adapter (on @anthropic-ai/sdk) in the Worker bundle under workerd and in Deno:
 * a Claude session configured by ANTHROPIC_* variables alone streams a thinking answer through
 * the SDK, and its next turn sends the thinking block back with its signature.
 */
const MODEL = 'claude-opus-4-7'
const SIGNATURE = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds'

const runtimes: [string, (vars: Record<string, string>) => Promise<RuntimeProcess>][] = [
  ['workerd', (vars) => startWorkerd(vars)],
  ['deno', startDeno],
]

describe.each(runtimes)('Anthropic adapter in %s', (name, start) => {
  let replay: ProviderReplay
  let runtime: RuntimeProcess | undefined

  beforeAll(async () => {
    replay = await startProviderReplay()
    runtime = await start({
      TURNLINE_SINGLE_TENANT: '1',
      ANTHROPIC_API_KEY: 'sk-ant-runtime',
      ANTHROPIC_BASE_URL: replay.baseURL.replace(/\/v1$/, ''),
      TURNLINE_MODEL: MODEL,
      TURNLINE_STORE: 'memory',
    })
  })
  afterAll(async () => {
    await runtime?.stop()
    await replay.close()
  })

  async function call(path: string, body: unknown) {
    if (!runtime) throw new Error(`${name} is not running`)
    const response = await fetch(`${runtime.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    })
    const text = await response.text()
    if (!response.ok) throw new Error(`${response.status}: ${text}\n${runtime.output()}`)
    return JSON.parse(text) as { session_id: string; status: string; events: ThreadEvent[] }
  }

  it('streams thinking and text, and sends the signed thinking block back', async () => {
    const { session_id } = await call('/v1/sessions', {
      model: { reasoning_effort: 'high' },
    })
    replay.serve(
      messageReply({
        model: MODEL,
        usage: { input_tokens: 40, output_tokens: 12 },
        blocks: [{ thinking: ['Short question.'], signature: SIGNATURE }, { text: ['Hi', '!'] }],
        stop: 'end_turn',
      }),
      messageReply({
        model: MODEL,
        usage: { input_tokens: 60, output_tokens: 3 },
        blocks: [{ text: ['Bye.'] }],
        stop: 'end_turn',
      }),
    )
    const first = await call(`/v1/sessions/${session_id}/turns`, { input: 'Hello' })
    expect(first.status).toBe('completed')
    const items = first.events.flatMap((e) => (e.type === 'item.completed' ? [e.item] : []))
    expect(items).toMatchObject([
      { type: 'reasoning', text: 'Short question.' },
      { type: 'agent_message', text: 'Hi!' },
    ])
    const second = await call(`/v1/sessions/${session_id}/turns`, { input: 'Bye' })
    expect(second.status).toBe('completed')

    const [one, two] = replay.requests
    expect(one?.path).toBe('/v1/messages')
    expect(one?.headers).toMatchObject({ authorization: 'Bearer sk-ant-runtime' })
    expect(one?.body).toMatchObject({
      model: MODEL,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
    })
    expect(two?.body.messages).toMatchObject([
      { role: 'user' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Short question.', signature: SIGNATURE },
          { type: 'text', text: 'Hi!' },
        ],
      },
      { role: 'user' },
    ])
    replay.assertDone()
  })
})
