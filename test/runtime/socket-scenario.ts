import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { assertConformingStream, socketErrorEventErrors } from '../support/open-responses-schema.ts'
import { WEATHER_TOOL, weatherModel } from '../support/responses-app.ts'
import {
  openResponsesSocket,
  refusedUpgrade,
  type SocketTurn,
  socketUrl,
} from '../support/responses-socket-client.ts'
import type { RuntimeProcess } from '../support/runtime-process.ts'

/**
 * The Open Responses WebSocket mode in a runtime's own process, with its own WebSocket server
 * API (Deno.upgradeWebSocket, workerd's WebSocketPair): a streamed response, a client tool's
 * round trip on the store: false chain the connection keeps, a stored response continued, a bad
 * event answered with an error event, an upgrade without a key refused.
 */
export type StartRuntime = (vars: Record<string, string>) => Promise<RuntimeProcess>

const KEY = 'runtime-socket-key-0123456789abcd'
type Json = Record<string, unknown>

function completed(turn: SocketTurn) {
  expect(turn.last.type, JSON.stringify(turn.last).slice(0, 400)).toBe('response.completed')
  assertConformingStream(turn.events, { extensions: false })
  expect(turn.events.map((e) => e.sequence_number)).toEqual(turn.events.map((_, i) => i))
  return turn.response as Json & { id: string; output: Json[] }
}

export function socketScenario(name: string, start: StartRuntime): void {
  describe(`${name}: the WebSocket mode of /v1/responses`, () => {
    let mock: MockOpenAI | undefined
    let runtime: RuntimeProcess | undefined
    let url = ''
    const connect = () => openResponsesSocket(url, { Authorization: `Bearer ${KEY}` })

    beforeAll(async () => {
      mock = await startMockOpenAI()
      mock.respond(weatherModel('Oslo', (messages) => `${messages.length} messages read`))
      runtime = await start({
        TURNLINE_API_KEYS: `${KEY}=runtime`,
        OPENAI_BASE_URL: mock.baseURL,
        OPENAI_API_KEY: 'test-key',
        TURNLINE_MODEL: 'gpt-4o-mini',
      })
      url = socketUrl(runtime.url)
    })
    afterAll(async () => {
      await runtime?.stop()
      await mock?.close()
    })

    it('streams responses, continues them, and runs a client tool round trip', async () => {
      const socket = await connect()
      socket.send({ type: 'response.create', input: 'hello' })
      const first = completed(await socket.turn())
      socket.send({ type: 'response.create', previous_response_id: first.id, input: 'again' })
      expect(JSON.stringify(completed(await socket.turn()).output)).toContain('3 messages read')

      socket.send({ type: 'response.create', store: false, tools: [WEATHER_TOOL], input: 'Oslo?' })
      const asked = completed(await socket.turn())
      const call = asked.output.find((item) => item.type === 'function_call')
      expect(call).toMatchObject({ name: 'get_weather' })
      socket.send({
        type: 'response.create',
        store: false,
        tools: [WEATHER_TOOL],
        previous_response_id: asked.id,
        input: [{ type: 'function_call_output', call_id: call?.call_id, output: 'snow' }],
      })
      expect(JSON.stringify(completed(await socket.turn()).output)).toContain('The tool said: snow')
      socket.close()
      expect((await socket.closed).code).toBe(1000)
    })

    it('answers a bad event with an error event, and refuses an upgrade without a key', async () => {
      const socket = await connect()
      socket.send({ type: 'response.create', input: 'x', stream: true })
      const { last } = await socket.turn()
      expect(socketErrorEventErrors(last)).toEqual([])
      expect(last).toMatchObject({ status: 400, error: { code: 'invalid_input', param: 'stream' } })
      socket.send({
        type: 'response.create',
        store: false,
        previous_response_id: 'resp_gone',
        input: 'x',
      })
      expect((await socket.turn()).last).toMatchObject({
        error: { code: 'previous_response_not_found' },
      })
      socket.close()
      const refused = await refusedUpgrade(url.replace(/^ws/, 'http'))
      expect(refused.status).toBe(401)
      expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'unauthorized' } })
    })
  })
}
