import { once } from 'node:events'
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeFetch } from '../../adapters/node-http/node-fetch.ts'

/**
 * nodeFetch's HTTP/1.1 on the wire, against a server that writes its answers byte by byte as
 * given: what Node's own server never sends (an answer read to the connection's close, an
 * interim 1xx answer, a chunked answer cut anywhere), which connections are kept, and the
 * requests refused before anything is sent.
 */
let server: Server
let base = ''
const sockets: Socket[] = []
/** The answer to the next request, as bytes cut into pieces, then whether to close. */
let answer: { pieces: string[]; close: boolean } = { pieces: [], close: false }
const requests: string[] = []
/** What came after each request's head in the same read (the bench's bodies come in one write). */
const bodies: string[] = []

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.push(socket)
    let seen = ''
    socket.on('data', (chunk: Buffer) => {
      seen += chunk.toString('latin1')
      const end = seen.indexOf('\r\n\r\n')
      if (end === -1) return
      requests.push(seen.slice(0, end))
      bodies.push(seen.slice(end + 4))
      seen = ''
      const { pieces, close } = answer
      void (async () => {
        for (const piece of pieces) {
          socket.write(piece)
          await new Promise((resolve) => setImmediate(resolve))
        }
        if (close) socket.end()
      })()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  for (const socket of sockets) socket.destroy()
  await new Promise((resolve) => server.close(resolve))
})

const fetchOnNode = nodeFetch()

describe('nodeFetch on the wire', () => {
  it('reads a chunked answer however it is cut, and keeps the connection', async () => {
    const wire =
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=y\r\n world\r\n0\r\n\r\n'
    answer = { pieces: wire.match(/.{1,3}/gs) ?? [], close: false }
    const before = sockets.length
    expect(await (await fetchOnNode(`${base}/a`)).text()).toBe('hello world')
    expect(await (await fetchOnNode(`${base}/b`)).text()).toBe('hello world')
    expect(sockets.length - before).toBeLessThanOrEqual(1)
    expect(requests.at(-1)).toMatch(/^GET \/b HTTP\/1\.1\r\n/)
    expect(requests.at(-1)).toContain('\r\nconnection: keep-alive')
  })

  it('reads an answer without a length to the close, skips an interim answer, and does not keep those connections', async () => {
    answer = { pieces: ['HTTP/1.1 200 OK\r\n\r\n', 'to the ', 'end'], close: true }
    expect(await (await fetchOnNode(`${base}/c`)).text()).toBe('to the end')
    const before = sockets.length
    answer = {
      pieces: [
        'HTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n',
        'HTTP/1.1 200 OK\r\n',
        'connection: close\r\ncontent-length: 2\r\n\r\nok',
      ],
      close: false,
    }
    const interim = await fetchOnNode(`${base}/d`)
    expect(interim.status).toBe(200)
    expect(interim.headers.get('link')).toBeNull()
    expect(await interim.text()).toBe('ok')
    answer = { pieces: ['HTTP/1.1 204 No Content\r\n\r\n'], close: false }
    expect((await fetchOnNode(`${base}/e`, { method: 'DELETE' })).status).toBe(204)
    // After the answer read to the close and the one that asked to close: a new connection each.
    expect(sockets.length - before).toBe(2)
  })

  it('opens a new connection when the server closed the kept one', async () => {
    // Kept by the client (HTTP/1.1, read to its length), then closed by the server.
    answer = { pieces: ['HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nfine'], close: true }
    expect(await (await fetchOnNode(`${base}/i`)).text()).toBe('fine')
    await once(sockets.at(-1) as Socket, 'close')
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve))
    const before = sockets.length
    answer = { pieces: ['HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nagain'], close: false }
    expect(await (await fetchOnNode(`${base}/j`)).text()).toBe('again')
    expect(sockets.length - before).toBe(1)
  })

  it('sends a text body as UTF-8 in the write of its head, its length in bytes', async () => {
    answer = { pieces: ['HTTP/1.1 204 No Content\r\n\r\n'], close: false }
    await fetchOnNode(`${base}/k`, { method: 'POST', body: 'h\u00e9llo \u2713 \ud83d' })
    const bytes = Buffer.from('h\u00e9llo \u2713 \ufffd')
    expect(requests.at(-1)).toContain(`\r\ncontent-length: ${bytes.byteLength}\r\n`)
    expect(requests.at(-1)).toContain('\r\ncontent-type: text/plain;charset=UTF-8\r\n')
    expect(bodies.at(-1)).toBe(bytes.toString('latin1'))
  })

  it('refuses a header that would break the head before sending anything', async () => {
    const count = requests.length
    const sent = (headers: Record<string, string>) => fetchOnNode(`${base}/f`, { headers })
    await expect(sent({ 'x-a': 'one\r\nx-injected: 1' })).rejects.toThrow(TypeError)
    await expect(sent({ 'bad name': 'x' })).rejects.toThrow(TypeError)
    await expect(fetchOnNode(`${base}/f`, { method: 'GE T' })).rejects.toThrow(TypeError)
    expect(requests.length).toBe(count)
  })

  it('fails as fetch does when the answer breaks HTTP, and errors a body cut short', async () => {
    answer = { pieces: ['HTTP/1.1 200 OK\r\nbroken header\r\n\r\n'], close: false }
    const failure = await fetchOnNode(`${base}/g`).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(TypeError)
    expect((failure as TypeError).message).toBe('fetch failed')
    answer = { pieces: ['HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc'], close: true }
    const cut = await fetchOnNode(`${base}/h`)
    await expect(cut.text()).rejects.toThrow('terminated')
  })
})
