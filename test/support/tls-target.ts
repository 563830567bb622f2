import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSecureContext } from 'node:tls'
import { promisify } from 'node:util'

/**
 * An HTTPS server on 127.0.0.1 with a self-signed certificate for `name` (made by openssl for
 * this run), which no client trusts: it records the server name (SNI) each handshake asks for
 * and the requests that got through, so a test sees which name a client sent and that it
 * refused the certificate before sending anything.
 */
export async function startTlsTarget(name: string) {
  const dir = await mkdtemp(join(tmpdir(), 'turnline-tls-'))
  const [keyFile, certFile] = [join(dir, 'key.pem'), join(dir, 'cert.pem')]
  await promisify(execFile)('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    `subjectAltName=DNS:${name}`,
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ])
  const [key, cert] = [await readFile(keyFile), await readFile(certFile)]
  await rm(dir, { recursive: true, force: true })
  const serverNames: string[] = []
  let requests = 0
  const server = createServer(
    {
      key,
      cert,
      SNICallback: (servername, done) => {
        serverNames.push(servername)
        done(null, createSecureContext({ key, cert }))
      },
    },
    (_req, res) => {
      requests += 1
      res.end('{"reached":true}')
    },
  )
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    serverNames: () => [...serverNames],
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
