import { request } from 'node:http'

/**
 * POSTs the start of a body of unknown length (`Transfer-Encoding: chunked`, no Content-Length)
 * on a connection of its own: 16 KiB chunks up to `bytes`, then nothing — the body never ends —
 * and resolves with the answer's status and text, then closes the connection. A server that
 * waits for the whole body never answers (rejects after 15 s). Writing stops before the answer
 * comes, so a local proxy (wrangler dev) that resets a connection whose request body is still
 * arriving cannot cut the answer short.
 */
export function chunkedPost(
  url: string,
  headers: Record<string, string>,
  bytes: number,
): Promise<{ status: number; text: string }> {
  const chunk = Buffer.alloc(16_384, 0x20)
  return new Promise((resolve, reject) => {
    let sent = 0
    let answered = false
    const req = request(url, { method: 'POST', headers, agent: false }, (response) => {
      answered = true
      const parts: Buffer[] = []
      response.on('data', (part: Buffer) => parts.push(part))
      response.on('end', () => {
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(parts).toString() })
        req.destroy()
      })
      response.on('error', reject)
    })
    req.setTimeout(15_000, () => req.destroy(new Error(`no answer from ${url} in 15 s`)))
    // A reset after the answer came is the proxy's: the answer is what counts.
    req.on('error', (error) => {
      if (!answered) reject(error)
    })
    const write = () => {
      while (!answered && sent < bytes) {
        sent += chunk.byteLength
        if (!req.write(chunk)) return void req.once('drain', write)
      }
    }
    write()
  })
}
