import { once } from 'node:events'
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeFetch } from '../../adapters/node-http/node-fetch.ts'
import { bodyReader } from '../../src/shared/body-reader.ts'

/**
 * The Response the Node entries' fetch answers, against a real server: a `Response` whose body
 * the model adapter and the tool output capture read through its own reader (no web stream),
 * with the same ends as the web stream (done, the abort's reason, `terminated`), used once
 * whichever way it is read; every other member is a platform Response's over the same body.
 */
let server: Server
let base = ''
const held: ServerResponse[] = []

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/'
    if (path === '/two') {
      res.writeHead(200, { 'content-type': 'text/plain', 'x-kind': 'two' })
      res.write('first,')
      setImmediate(() => res.end('second'))
    } else if (path.startsWith('/partial')) {
      // 'partial' of a declared 100 bytes; the rest never comes (held), or the connection breaks.
      res.writeHead(200, { 'content-length': '100' }).write('partial')
      if (path === '/partial/held') held.push(res)
      else setImmediate(() => res.socket?.destroy())
    } else {
      res.writeHead(204)
      res.end()
    }
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  for (const res of held) res.destroy()
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const fetchOnNode = nodeFetch()

async function readAll(response: Response): Promise<string> {
  const reader = bodyReader(response)
  if (!reader) throw new Error('no reader')
  const decoder = new TextDecoder()
  let text = ''
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    text += decoder.decode(next.value, { stream: true })
  }
  return text
}

describe('the Response of nodeFetch', () => {
  it('is a Response read through its own reader, once', async () => {
    const response = await fetchOnNode(`${base}/two`)
    expect(response).toBeInstanceOf(Response)
    expect(Object.prototype.toString.call(response)).toBe('[object Response]')
    expect([response.status, response.ok, response.headers.get('x-kind')]).toEqual([
      200,
      true,
      'two',
    ])
    expect(response.bodyUsed).toBe(false)
    expect(await readAll(response)).toBe('first,second')
    expect(response.bodyUsed).toBe(true)
    expect(bodyReader(response)).toBeUndefined()
    await expect(response.text()).rejects.toThrow(TypeError)
  })

  it('answers text, JSON and bytes by its own reads, and anything else as a platform Response', async () => {
    expect(await (await fetchOnNode(`${base}/two`)).text()).toBe('first,second')
    const bytes = await (await fetchOnNode(`${base}/two`)).arrayBuffer()
    expect(new TextDecoder().decode(bytes)).toBe('first,second')
    const response = await fetchOnNode(`${base}/two`)
    expect([response.url, response.type, response.redirected]).toEqual(['', 'default', false])
    const copy = response.clone()
    expect(await copy.text()).toBe('first,second')
    expect(await (await response.blob()).text()).toBe('first,second')
    expect(response.bodyUsed).toBe(true)
    // Once the body was taken as a web stream, a reader is that stream's.
    const streamed = await fetchOnNode(`${base}/two`)
    expect(streamed.body).toBeInstanceOf(ReadableStream)
    expect(await readAll(streamed)).toBe('first,second')
  })

  it('ends its reader with the abort’s reason, or terminated when the connection breaks', async () => {
    const controller = new AbortController()
    const held = await fetchOnNode(`${base}/partial/held`, { signal: controller.signal })
    const reader = bodyReader(held)
    expect(new TextDecoder().decode((await reader?.read())?.value)).toBe('partial')
    const pending = reader?.read()
    controller.abort()
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' })
    await expect(reader?.read()).rejects.toMatchObject({ name: 'AbortError' })
    await expect(readAll(await fetchOnNode(`${base}/partial/broken`))).rejects.toThrow('terminated')
  })

  it('has no reader without a body; a cancelled reader is done', async () => {
    const empty = await fetchOnNode(`${base}/empty`)
    expect(empty.status).toBe(204)
    expect(bodyReader(empty)).toBeUndefined()
    expect(empty.body).toBeNull()
    const cancelled = bodyReader(await fetchOnNode(`${base}/partial/held`))
    await cancelled?.cancel()
    expect(await cancelled?.read()).toEqual({ done: true, value: undefined })
    expect(await readAll(new Response('platform'))).toBe('platform')
  })
})
