import { mkdtemp, rm } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ServerProcess, startServerProcess } from '../support/server-process.ts'
import { requireServices } from '../support/services.ts'

/**
 * Key guessing against `npm start`'s real entry: a flood of wrong keys from one address gets
 * 429 with Retry-After instead of an endless stream of 401s, while a valid key from another
 * address still works. With a coordinator (plain Redis here) the count holds across instances:
 * a second server refuses the flooding address at once. Client addresses are the sockets'
 * peers: 127.0.0.1 and 127.0.0.2 (both loopback on Linux) stand for two clients.
 */
const services = requireServices()
const run = crypto.randomUUID().slice(0, 8)
const KEY = `throttle-key-${run}-0123456789`
const PER_MINUTE = 5
let dir = ''

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-throttle-'))
})
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

const serverEnv = (extra: Record<string, string> = {}) => ({
  TURNLINE_DATA_DIR: dir,
  TURNLINE_API_KEYS: `${KEY}=acme`,
  TURNLINE_AUTH_FAILURES_PER_MINUTE: String(PER_MINUTE),
  // No embedded runner (it would need the command sandbox): nothing here runs a command.
  TURNLINE_RUNNER_URL: 'http://127.0.0.1:9',
  TURNLINE_RUNNER_SECRET: 'throttle-runner-secret-0123',
  ...extra,
})

interface Answer {
  status: number
  retryAfter: string | undefined
  body: string
}

/** GET /v1/sessions from `from` (the source address of the connection) with `key`. */
function list(server: ServerProcess, from: string, key: string): Promise<Answer> {
  const url = new URL(server.url)
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: '/v1/sessions',
        localAddress: from,
        agent: false,
        headers: { authorization: `Bearer ${key}` },
      },
      (response) => {
        let body = ''
        response.on('data', (chunk: Buffer) => {
          body += chunk.toString()
        })
        response.on('end', () => {
          const retryAfter = response.headers['retry-after']
          resolve({ status: response.statusCode ?? 0, retryAfter, body })
        })
        response.on('error', reject)
      },
    )
    request.on('error', reject)
    request.end()
  })
}

async function flood(server: ServerProcess, from: string, count: number): Promise<Answer[]> {
  const answers: Answer[] = []
  for (let i = 0; i < count; i++) answers.push(await list(server, from, `guess-${run}-${i}-abcdef`))
  return answers
}

describe('a flood of wrong keys', () => {
  it('gets 429 with Retry-After; a valid key from another address still works', async () => {
    const server = await startServerProcess(serverEnv())
    try {
      const answers = await flood(server, '127.0.0.1', 40)
      const statuses = answers.map((a) => a.status)
      expect(statuses.slice(0, PER_MINUTE)).toEqual(Array(PER_MINUTE).fill(401))
      expect(statuses.slice(PER_MINUTE)).toEqual(Array(40 - PER_MINUTE).fill(429))
      const refused = answers.at(-1)
      expect(refused?.retryAfter).toMatch(/^[1-9]\d*$/)
      expect(JSON.parse(refused?.body ?? '')).toMatchObject({ error: { code: 'rate_limited' } })

      expect((await list(server, '127.0.0.2', KEY)).status).toBe(200)
      // The operator log has one line for the burst, naming the client, not the keys.
      const lines = server
        .output()
        .split('\n')
        .filter((line) => line.includes('"auth_throttled"'))
      expect(lines).toHaveLength(1)
      expect(JSON.parse(lines[0] ?? '')).toMatchObject({ scope: 'address', client: '127.0.0.1' })
      expect(lines[0]).not.toContain('guess-')
    } finally {
      await server.stop()
    }
  })

  it('with a coordinator, is counted across instances', async () => {
    // Both servers are one deployment: the same store and the same Redis namespace.
    const shared = serverEnv({
      REDIS_URL: services.redisUrl,
      TURNLINE_REDIS_NAMESPACE: `auth-throttle-${run}`,
    })
    const [a, b] = await Promise.all([startServerProcess(shared), startServerProcess(shared)])
    try {
      // Half the allowance on each instance, then both refuse: one bucket, not two.
      const from = '127.0.0.3'
      const first = await flood(a, from, 3)
      const second = await flood(b, from, 3)
      expect([...first, ...second].map((x) => x.status)).toEqual([401, 401, 401, 401, 401, 429])
      expect((await flood(a, from, 1))[0]?.status).toBe(429)
      expect((await list(b, '127.0.0.4', KEY)).status).toBe(200)
    } finally {
      await Promise.all([a.stop(), b.stop()])
    }
  })
})
