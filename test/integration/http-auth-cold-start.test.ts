import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { hashApiKey, updateKeyRegistry } from '../../functions/tenancy/key-registry.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { startServerProcess } from '../support/server-process.ts'
import { requireServices } from '../support/services.ts'
import { startTestBackends } from '../support/test-deployment.ts'

/**
 * A server that reads its keys from the key registry has no keys until its first read of the
 * registry ends: requests arriving meanwhile must wait for it (bounded), never answer 401 with a
 * valid key. `npm start`'s real entry, started fresh for each store the registry can live in
 * (the fs store, S3) and each coordinator, then 30 requests at once.
 */
const services = requireServices()
const run = crypto.randomUUID().slice(0, 8)
// A registry of some size: its first read (parse, each new tenant's tool signing secret) takes
// a while, and requests keep arriving meanwhile.
const keys = Array.from({ length: 300 }, (_, i) => `cold-start-key-${run}-${i}-0123456789`)
let dataDir = ''
let hashes: string[] = []
const closers: (() => Promise<void>)[] = []

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'turnline-cold-start-'))
  hashes = await Promise.all(keys.map((key) => hashApiKey(key)))
})
afterAll(async () => {
  for (const close of closers.splice(0)) await close()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

/** Where a deployment keeps its sessions and key registry, and its coordinator. */
interface KeyStore {
  env: Record<string, string>
  objects: ObjectStore
}

const onFs = (env: Record<string, string>): KeyStore => ({
  env: { TURNLINE_DATA_DIR: dataDir, ...env },
  objects: new FsObjectStore({ root: dataDir }),
})

const configurations: [string, () => Promise<KeyStore>][] = [
  ['the fs store, coordination in the process', async () => onFs({})],
  [
    'the fs store and plain Redis',
    // Its own keys in the shared redis-server: each test's data dir is another deployment.
    async () =>
      onFs({
        REDIS_URL: services.redisUrl,
        TURNLINE_REDIS_NAMESPACE: `cold-start-${process.pid}-${Date.now()}`,
      }),
  ],
  [
    'S3 (moto) and Upstash (the REST proxy on redis-server)',
    async () => {
      const backends = await startTestBackends('cold-start')
      closers.push(() => backends.close())
      return { env: backends.env(), objects: backends.bucket.store() }
    },
  ],
]

describe.each(configurations)('a valid key right after a start, with %s', (_, keyStore) => {
  it('30 parallel requests all succeed', async () => {
    const { env, objects } = await keyStore()
    await updateKeyRegistry(objects, (registry) => ({
      ...registry,
      keys: hashes.map((hash, i) => ({ hash, tenant: `tenant-${i}` })),
    }))
    const server = await startServerProcess({
      ...env,
      TURNLINE_KEY_REGISTRY: '1',
      TURNLINE_LOG: 'off',
      // No embedded runner (it would need the command sandbox): nothing here runs a command.
      TURNLINE_RUNNER_URL: 'http://127.0.0.1:9',
      TURNLINE_RUNNER_SECRET: 'cold-start-runner-secret',
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
