import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeFetch } from '../../adapters/node-http/node-fetch.ts'

/**
 * The Node entries' fetch on node:http against real servers: what the model client, HTTP tools,
 * the runner client and callbacks rely on from fetch — the request as sent, a streamed answer,
 * aborts and broken connections, redirects in each mode, kept-alive connections — and the
 * requests it leaves to the global fetch.
 */
interface Seen {
  method: string
  url: string
  headers: IncomingMessage['headers']
  body: string
}
let server: Server
let other: Server
let base = ''
let otherBase = ''
const seen: Seen[] = []
const connections = new Set<unknown>()
/** Answers held open by /hold, and the next chunk /stream may write. */
const held: ServerResponse[] = []
let release: (() => void) | undefined
/** Settles when the connection that carried /redirect-big's answer is closed. */
let redirectClosed: Promise<void> | undefined

async function route(req: IncomingMessage, res: ServerResponse, body: string): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://x').pathname
  if (path === '/echo') {
    res.writeHead(201, { 'content-type': 'application/json', 'x-multi': ['a', 'b'] })
    res.end(JSON.stringify({ method: req.method, body }))
  } else if (path === '/stream') {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.write('data: one\n\n')
    await new Promise<void>((resolve) => {
      release = resolve
    })
    res.end('data: two\n\n')
  } else if (path === '/hold') {
    held.push(res)
  } else if (path === '/hold-body') {
    res.writeHead(200)
    res.write('partial')
    held.push(res)
  } else if (path === '/break') {
    res.writeHead(200, { 'content-length': '100' })
    res.write('partial')
    setImmediate(() => res.socket?.destroy())
  } else if (path === '/gzip') {
    res.writeHead(200, { 'content-encoding': 'gzip' })
    res.end(gzipSync('compressed answer'))
  } else if (path.startsWith('/redirect/')) {
    const [, , status, ...to] = path.split('/')
    res.writeHead(Number(status), { location: decodeURIComponent(to.join('/')) })
    res.end()
  } else if (path === '/redirect-big') {
    redirectClosed = new Promise((resolve) => req.socket.once('close', () => resolve()))
    res.writeHead(307, { location: '/echo' })
    res.end('x'.repeat(4 * 1024 * 1024))
  } else if (path === '/empty') {
    res.writeHead(204)
    res.end()
  } else {
    res.writeHead(404)
    res.end('no such path')
  }
}

function recording(): Server {
  const s = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString()
    })
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
      void route(req, res, body)
    })
  })
  s.on('connection', (socket) => connections.add(socket))
  // Idle connections stay open: only the client closes them (a redirect's, below).
  s.keepAliveTimeout = 10 * 60_000
  return s
}

async function listen(s: Server): Promise<string> {
  s.listen(0, '127.0.0.1')
  await once(s, 'listening')
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`
}

beforeAll(async () => {
  server = recording()
  other = recording()
  base = await listen(server)
  otherBase = (await listen(other)).replace('127.0.0.1', 'localhost')
})

afterAll(async () => {
  for (const res of held) res.destroy()
  release?.()
  for (const s of [server, other]) {
    s.closeAllConnections()
    await new Promise((resolve) => s.close(resolve))
  }
})

const fetchOnNode = nodeFetch()
const last = () => seen[seen.length - 1] as Seen

describe('nodeFetch', () => {
  it('sends the request as fetch does and answers a Response', async () => {
    const response = await fetchOnNode(`${base}/echo?q=1`, {
      method: 'post',
      headers: { Authorization: 'Bearer k', 'X-Custom': 'v' },
      body: '{"a":1}',
    })
    expect(response.status).toBe(201)
    expect(response.ok).toBe(true)
    expect(response.headers.get('content-type')).toBe('application/json')
    expect(response.headers.get('x-multi')).toBe('a, b')
    expect(await response.json()).toEqual({ method: 'POST', body: '{"a":1}' })
    expect(last().url).toBe('/echo?q=1')
    expect(last().headers).toMatchObject({
      authorization: 'Bearer k',
      'x-custom': 'v',
      'content-type': 'text/plain;charset=UTF-8',
      'content-length': '7',
    })
  })

  it('takes headers as a Headers object and bytes as the body', async () => {
    const headers = new Headers({ 'content-type': 'application/octet-stream' })
    const response = await fetchOnNode(new URL(`${base}/echo`), {
      method: 'PUT',
      headers,
      body: new TextEncoder().encode('bytes'),
    })
    expect(await response.json()).toEqual({ method: 'PUT', body: 'bytes' })
    expect(last().headers['content-type']).toBe('application/octet-stream')
  })

  it('streams the answer as it arrives', async () => {
    const response = await fetchOnNode(`${base}/stream`, { method: 'POST', body: '{}' })
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    const decoder = new TextDecoder()
    const first = await reader.read()
    expect(decoder.decode(first.value)).toBe('data: one\n\n')
    release?.()
    let rest = ''
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      rest += decoder.decode(chunk.value)
    }
    expect(rest).toBe('data: two\n\n')
  })

  it('rejects with the signal’s reason when aborted before the answer', async () => {
    const controller = new AbortController()
    const pending = fetchOnNode(`${base}/hold`, { signal: controller.signal })
    await waitFor(() => held.length > 0)
    controller.abort()
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' })
    await expect(
      fetchOnNode(`${base}/hold`, { signal: AbortSignal.timeout(50) }),
    ).rejects.toMatchObject({ name: 'TimeoutError' })
    await expect(
      fetchOnNode(`${base}/echo`, { signal: AbortSignal.abort() }),
    ).rejects.toMatchObject({ name: 'AbortError' })
  })

  it('errors the body with the signal’s reason when aborted while it is read', async () => {
    const controller = new AbortController()
    const response = await fetchOnNode(`${base}/hold-body`, { signal: controller.signal })
    const reader = (response.body as ReadableStream<Uint8Array>).getReader()
    await reader.read()
    controller.abort()
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' })
  })

  it('errors the body when the connection breaks off, and fails as fetch does when none is made', async () => {
    const response = await fetchOnNode(`${base}/break`)
    await expect(response.text()).rejects.toThrow('terminated')
    const closed = createServer()
    const port = await listen(closed)
    await new Promise((resolve) => closed.close(resolve))
    const failure = await fetchOnNode(`${port}/echo`).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(TypeError)
    expect((failure as TypeError).message).toBe('fetch failed')
    expect(((failure as TypeError).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED')
  })

  it('follows redirects as fetch does, or answers them, or refuses them', async () => {
    const to = (status: number, target: string) =>
      `${base}/redirect/${status}/${encodeURIComponent(target)}`
    const manual = await fetchOnNode(to(302, '/echo'), { method: 'POST', redirect: 'manual' })
    expect(manual.status).toBe(302)
    expect(manual.headers.get('location')).toBe('/echo')
    await expect(fetchOnNode(to(302, '/echo'), { redirect: 'error' })).rejects.toThrow(TypeError)

    const seeOther = await fetchOnNode(to(303, '/echo'), { method: 'POST', body: 'x' })
    expect(await seeOther.json()).toEqual({ method: 'GET', body: '' })
    const kept = await fetchOnNode(to(307, '/echo'), { method: 'POST', body: 'x' })
    expect(await kept.json()).toEqual({ method: 'POST', body: 'x' })

    const away = await fetchOnNode(to(308, `${otherBase}/echo`), {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'x-kept': '1' },
      body: 'x',
    })
    expect(await away.json()).toEqual({ method: 'POST', body: 'x' })
    expect(last().headers.authorization).toBeUndefined()
    expect(last().headers['x-kept']).toBe('1')

    // The redirect's own body is not read: its connection is closed, not left paused.
    const big = await fetchOnNode(`${base}/redirect-big`, { method: 'POST', body: 'x' })
    expect(await big.json()).toEqual({ method: 'POST', body: 'x' })
    await redirectClosed

    const loop = `${base}/redirect/302/${encodeURIComponent('/redirect/302/%2Fecho')}`
    expect((await fetchOnNode(loop)).status).toBe(201)
    const endless = `/redirect/302/${encodeURIComponent('/redirect/302/x')}`
    const self = `${base}/redirect/302/${encodeURIComponent(endless)}`
    await expect(fetchOnNode(self)).rejects.toThrow(TypeError)
  })

  it('keeps the connection for the next request, decompresses, and answers a null body', async () => {
    await (await fetchOnNode(`${base}/echo`)).text()
    const before = connections.size
    await (await fetchOnNode(`${base}/echo`)).text()
    await (await fetchOnNode(`${base}/echo`, { method: 'POST', body: 'x' })).text()
    expect(connections.size).toBe(before)
    expect(await (await fetchOnNode(`${base}/gzip`)).text()).toBe('compressed answer')
    const empty = await fetchOnNode(`${base}/empty`, { method: 'DELETE' })
    expect(empty.status).toBe(204)
    expect(empty.body).toBeNull()
  })

  it('leaves a Request, a stream body or another scheme to the fallback', async () => {
    const given: unknown[] = []
    const withFallback = nodeFetch((input, init) => {
      given.push(input)
      return fetch(input, init)
    })
    const request = new Request(`${base}/echo`, { method: 'POST', body: 'r' })
    expect(await (await withFallback(request)).json()).toEqual({ method: 'POST', body: 'r' })
    const stream = new Blob(['s']).stream()
    const streamed = await withFallback(`${base}/echo`, {
      method: 'POST',
      body: stream,
      duplex: 'half',
    } as RequestInit)
    expect(await streamed.json()).toEqual({ method: 'POST', body: 's' })
    expect(await (await withFallback('data:text/plain,hi')).text()).toBe('hi')
    await (await withFallback(`${base}/echo`)).text()
    expect(given).toHaveLength(3)
  })
})

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve))
}
