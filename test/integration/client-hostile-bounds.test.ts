import { describe, expect, it } from 'vitest'
import {
  TurnlineAnswerTooLargeError,
  TurnlineClient,
  TurnlineProtocolError,
} from '../../client/index.ts'
import { hostileHarness } from '../support/hostile-client.ts'
import { type Act, endless, type SeenRequest } from '../support/hostile-front.ts'

/**
 * The typed client's bounds in front of a server that misbehaves (test/support/hostile-client.ts):
 * a whole JSON answer past `maxAnswerBytes` fails the call instead of growing the client's memory
 * without end.
 */
const harness = hostileHarness()
const MAX = 1024 * 1024

const sessionGet = (request: SeenRequest) =>
  request.method === 'GET' && /^\/v1\/sessions\/[^/?]+$/.test(request.path)
const turnPost = (request: SeenRequest) =>
  request.method === 'POST' && /\/v1\/sessions\/[^/]+\/turns$/.test(request.path)
const endlessJson = endless(200, { 'content-type': 'application/json' }, '{"session_id":"', 'x')

/** A head that says the body is longer than the bound, then a few bytes and nothing more. */
const declaredTooLong: Act = async (res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(MAX + 1) })
  res.write('{"turn_id":')
}

describe('a whole JSON answer past maxAnswerBytes', () => {
  it('fails the call, the rest not read', async () => {
    const { session_id: id } = await harness.direct.createSession()
    const { client } = await harness.through(sessionGet, endlessJson, { maxAnswerBytes: MAX })
    const error = await client.getSession(id).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(TurnlineAnswerTooLargeError)
    expect(error).toBeInstanceOf(TurnlineProtocolError)
    expect(error).toMatchObject({ maxBytes: MAX, status: 200 })
    // An ordinary answer is far below it.
    const { client: bounded } = await harness.through(() => false, endlessJson, {
      maxAnswerBytes: MAX,
    })
    expect((await bounded.getSession(id)).session_id).toBe(id)
  }, 30_000)

  it("fails a turn's JSON answer, streamed or not, that says it is longer", async () => {
    const { session_id: id } = await harness.direct.createSession()
    for (const call of [
      (client: TurnlineClient) => client.stepTurn(id, { input: 'hello' }),
      (client: TurnlineClient) => client.streamTurn(id, { input: 'hello' }).result(),
    ]) {
      const { client } = await harness.through(turnPost, declaredTooLong, { maxAnswerBytes: MAX })
      const error = await call(client).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(TurnlineAnswerTooLargeError)
    }
  }, 30_000)

  it('is a positive integer', () => {
    const url = 'http://127.0.0.1:9'
    expect(() => new TurnlineClient({ baseUrl: url, maxAnswerBytes: 0 })).toThrow(TypeError)
  })
})
