import { describe, expect, it } from 'vitest'
import { storageError } from '../../adapters/fs/fs-key-path.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { s3Error } from '../../adapters/s3/s3-errors.ts'
import { permissionRefusal } from '../../adapters/shared/runtime-permission.ts'
import { toCoordinatorError } from '../../adapters/upstash/upstash-errors.ts'
import { createDeps } from '../../functions/deps.ts'
import { checkedAtStart } from '../../functions/entries/startup-probe.ts'
import { ConfigError } from '../../functions/env-config.ts'
import { TurnlineError } from '../../src/contract/errors.ts'

/** What Deno 2 throws for a permission its flags do not grant (the shape; the class is Deno's). */
const notCapable = (what: string) =>
  Object.assign(
    new Error(`Requires ${what}, run again with the --allow-${what.split(' ')[0]} flag`),
    {
      name: 'NotCapable',
    },
  )

describe('a runtime refusing a permission', () => {
  it('is told apart from a fault of the service, wrapped or not', () => {
    expect(permissionRefusal(notCapable('net access to "s3.test:443"'))).toBe(
      'Requires net access to "s3.test:443", run again with the --allow-net flag',
    )
    const wrapped = new Error('fetch failed', { cause: notCapable('sys access to "osRelease"') })
    expect(permissionRefusal(wrapped)).toMatch(/--allow-sys flag/)
    const node = Object.assign(new Error('Access to this API has been restricted'), {
      code: 'ERR_ACCESS_DENIED',
    })
    expect(permissionRefusal(node)).toBe('Access to this API has been restricted')
    expect(
      permissionRefusal(Object.assign(new Error('old Deno'), { name: 'PermissionDenied' })),
    ).toBe('old Deno')
    for (const other of [new Error('ECONNRESET'), 'text', undefined, { name: 'AccessDenied' }]) {
      expect(permissionRefusal(other)).toBeUndefined()
    }
  })

  it('is a fault no retry fixes in every storage and coordinator adapter, its words in the log', () => {
    const refusal = notCapable('net access to "s3.test:443"')
    for (const error of [
      s3Error(refusal, 'get', 'a/b'),
      storageError(refusal, 'read', 'a/b'),
      toCoordinatorError(refusal, 'lease'),
    ]) {
      expect(error).toMatchObject({ retryable: false, details: { reason: 'permission' } })
      expect(error.code).toMatch(/^(storage|coordinator)_unavailable$/)
      expect(error.message).not.toContain('s3.test')
      expect(error.logDetails).toEqual({ refusal: refusal.message })
    }
  })

  it('S3 without credentials is not retried either, and names the variables', () => {
    const none = Object.assign(new Error('Could not load credentials from any providers'), {
      name: 'CredentialsProviderError',
    })
    const error = s3Error(none, 'get', 'k')
    expect(error).toMatchObject({ code: 'storage_unavailable', retryable: false })
    expect(error.message).toMatch(/set S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY/)
  })
})

describe('checkedAtStart', () => {
  const failing = (error: unknown) => {
    const store = new MemoryObjectStore()
    store.get = () => Promise.reject(error)
    return store
  }
  const outcome = (store: MemoryObjectStore) =>
    checkedAtStart(async () => 'claimed', store).then(
      (value) => value,
      (error: unknown) => error,
    )

  it('runs the calls once the store answered', async () => {
    expect(await outcome(new MemoryObjectStore())).toBe('claimed')
  })

  it('turns a refusal or a fault no retry fixes into a configuration error naming it', async () => {
    const refused = await outcome(failing(s3Error(notCapable('net access to "h"'), 'get', 'k')))
    expect(refused).toBeInstanceOf(ConfigError)
    expect(String(refused)).toContain(
      'the runtime refused a permission this deployment needs: Requires net access to "h"',
    )
    const permanent = new TurnlineError('storage_unavailable', 'S3 get failed: NoSuchBucket', {
      retryable: false,
    })
    expect(String(await outcome(failing(permanent)))).toContain(
      'storage or coordinator unusable: S3 get failed: NoSuchBucket',
    )
  })

  it('leaves a fault worth retrying as it is', async () => {
    const brief = new TurnlineError('storage_unavailable', 'S3 get failed: SlowDown')
    expect(await outcome(failing(brief))).toBe(brief)
  })
})

describe('a runtime without an AWS credential chain (a Worker)', () => {
  it('refuses S3_BUCKET without S3 keys at start', async () => {
    const worker = { memoryStoreByDefault: true }
    const error = await createDeps(
      { TURNLINE_SINGLE_TENANT: '1', S3_BUCKET: 'bucket' },
      worker,
    ).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(ConfigError)
    expect(String(error)).toMatch(
      /S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: required with S3_BUCKET/,
    )
    const keyed = await createDeps(
      {
        TURNLINE_SINGLE_TENANT: '1',
        S3_BUCKET: 'bucket',
        S3_ACCESS_KEY_ID: 'a',
        S3_SECRET_ACCESS_KEY: 'b',
      },
      worker,
    )
    expect(keyed.notices).toContain('sessions in S3 bucket bucket')
  })
})
