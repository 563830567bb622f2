import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import {
  claimRedisNamespace,
  DEPLOYMENT_OBJECT,
  deploymentIdOf,
} from '../../functions/deployment-claim.ts'
import { ConfigError } from '../../functions/env-config.ts'
import {
  NamespaceClaimSchema,
  parseDeploymentId,
  serializeDeploymentId,
} from '../../src/contract/deployment-identity.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'

const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../fixtures/deployment/${name}`, import.meta.url)))
const text = (name: string) => new TextDecoder().decode(fixture(name))

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ConfigError)
  return (error as ConfigError).message
}

describe('the deployment id and the namespace claim as stored', () => {
  it('read the fixtures and write them byte-identically', () => {
    const id = parseDeploymentId(fixture('deployment.json'))
    expect(id.id).toBe('dep_5f0c1e9a2b7d4c3e8a6f1b2c3d4e5f60')
    expect(serializeDeploymentId(id)).toBe(text('deployment.json'))
    const claim = NamespaceClaimSchema.parse(JSON.parse(text('namespace-claim.json')))
    expect(JSON.stringify(claim)).toBe(text('namespace-claim.json'))
  })

  it('another version is unsupported, anything else corrupt', () => {
    const doc = JSON.parse(text('deployment.json'))
    const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))
    const code = (run: () => unknown) => {
      try {
        run()
      } catch (error) {
        return isTurnlineError(error) ? error.code : String(error)
      }
      return 'ok'
    }
    expect(code(() => parseDeploymentId(bytes({ ...doc, version: 2 })))).toBe('unsupported_version')
    expect(code(() => parseDeploymentId(bytes({ ...doc, id: 'prod' })))).toBe('corrupt_data')
    expect(code(() => parseDeploymentId(new TextEncoder().encode('{')))).toBe('corrupt_data')
  })
})

describe('the deployment of a store', () => {
  it('is made once: concurrent first starts agree on one id, later starts read it', async () => {
    const store = new MemoryObjectStore()
    const ids = await Promise.all(Array.from({ length: 8 }, () => deploymentIdOf(store)))
    expect(new Set(ids).size).toBe(1)
    expect(ids[0]).toMatch(/^dep_[0-9a-f]{32}$/)
    expect(await deploymentIdOf(store)).toBe(ids[0])
    expect((await store.list('.turnline/')).objects.map((o) => o.key)).toEqual([DEPLOYMENT_OBJECT])
  })
})

describe('claiming a Redis namespace', () => {
  const claim = { namespace: 'turnline:ns:prod:', store: 's3://data/prod' }

  it('is held by the first deployment; its instances share it, another deployment refuses', async () => {
    const coordinator = new MemoryCoordinator()
    const prod = new MemoryObjectStore()
    expect(await claimRedisNamespace(claim, prod, coordinator)).toMatch(
      /^Redis keys under turnline:ns:prod: belong to this deployment \(dep_/,
    )
    expect(await claimRedisNamespace(claim, prod, coordinator)).toMatch(/belong to this deployment/)
    const staging = { namespace: claim.namespace, store: 's3://data/staging' }
    expect(
      await refusal(claimRedisNamespace(staging, new MemoryObjectStore(), coordinator)),
    ).toMatch(
      /TURNLINE_REDIS_NAMESPACE: the Redis keys under turnline:ns:prod: belong to deployment dep_\w+ \(sessions in s3:\/\/data\/prod, claimed .*\), not to this one \(dep_\w+, sessions in s3:\/\/data\/staging\).*delete the key turnline:ns:prod:deployment/,
    )
  })

  it('refuses a namespace whose claim it cannot read', async () => {
    const coordinator = new MemoryCoordinator()
    await coordinator.claimNamespace('written by hand')
    expect(await refusal(claimRedisNamespace(claim, new MemoryObjectStore(), coordinator))).toMatch(
      /belong to something else \("written by hand"\)/,
    )
  })

  it('claims nothing without a claim to make (no shared Redis, or sessions in memory)', async () => {
    const store = new MemoryObjectStore()
    expect(await claimRedisNamespace(undefined, store, new MemoryCoordinator())).toBeUndefined()
    expect(await store.get(DEPLOYMENT_OBJECT)).toBeNull()
  })
})
