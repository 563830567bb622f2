import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { hashApiKey, updateKeyRegistry } from '../../functions/tenancy/key-registry.ts'
import { startServerProcess } from '../support/server-process.ts'
import { requireServices } from '../support/services.ts'

/**
 * A server that reads its keys from the key registry has no keys until its first read of the
 * registry ends: requests arriving meanwhile must wait for it (bounded), never answer 401 with a
 * valid key. `npm start`'s real entry, started fresh for each store, then 30 requests at once.
 */
const services = requireServices()
const run = crypto.randomUUID().slice(0, 8)
// A registry of some size: its first read (parse, each new tenant's tool signing secret) takes
// a while, and requests keep arriving meanwhile.
const keys = Array.from({ length: 300 }, (_, i) => `cold-start-key-${run}-${i}-0123456789`)
let dataDir = ''

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'turnline-cold-start-'))
  const hashes = await Promise.all(keys.map((key) => hashApiKey(key)))
  await updateKeyRegistry(new FsObjectStore({ root: dataDir }), (registry) => ({
    ...registry,
    keys: hashes.map((hash, i) => ({ hash, tenant: `tenant-${i}` })),
  }))
})
afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

const configurations: [string, Record<string, string>][] = [
  ['the fs store, coordination in the process', {}],
  [
    'the fs store and plain Redis',
    // Its own keys in the shared redis-server: each test's data dir is another deployment.
    {
      REDIS_URL: services.redisUrl,
      TURNLINE_REDIS_NAMESPACE: `cold-start-${process.pid}-${Date.now()}`,
    },
  ],
]

describe.each(configurations)('a valid key right after a start, with %s', (_, extra) => {
  it('30 parallel requests all succeed', async () => {
    const server = await startServerProcess({
      TURNLINE_DATA_DIR: dataDir,
      TURNLINE_KEY_REGISTRY: '1',
      TURNLINE_LOG: 'off',
      // No embedded runner (it would need the command sandbox): nothing here runs a command.
      TURNLINE_RUNNER_URL: 'http://127.0.0.1:9',
      TURNLINE_RUNNER_SECRET: 'cold-start-runner-secret',
      ...extra,
    })
    try {
      const answers = await Promise.all(
        Array.from({ length: 30 }, async (_, i) => {
          const response = await fetch(`${server.url}/v1/sessions`, {
            headers: { authorization: `Bearer ${keys[(i * 7) % keys.length]}` },
          })
          return `${response.status} ${await response.text()}`.slice(0, 200)
        }),
      )
      expect(answers.filter((answer) => !answer.startsWith('200 '))).toEqual([])
    } finally {
      await server.stop()
    }
  })
})
