import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDeps } from '../../functions/deps.ts'
import { ConfigError } from '../../functions/env-config.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'

/**
 * Where a deployment's S3 client takes its credentials from, first found: S3_ACCESS_KEY_ID and
 * S3_SECRET_ACCESS_KEY; AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (a
 * Lambda function's role); the entry's AWS credential chain (Node, Lambda); else the start is
 * refused. Each request the deployment sends to moto is watched for the key it is signed with.
 */
const services = requireServices()
let bucket: Awaited<ReturnType<typeof createTestBucket>>
beforeAll(async () => {
  bucket = await createTestBucket(services.s3, 'creds')
})
afterAll(async () => {
  await bucket?.destroy()
})

async function signedWith(
  env: Record<string, string>,
  chain?: () => Promise<{ accessKeyId: string; secretAccessKey: string; sessionToken?: string }>,
) {
  const seen: { key: string | undefined; token: string | undefined }[] = []
  const watching: typeof fetch = (input, init) => {
    const headers = (init?.headers ?? {}) as Record<string, string>
    if (String(input).startsWith(services.s3.endpoint)) {
      const key = /Credential=([^/]+)\//.exec(headers.authorization ?? '')?.[1]
      seen.push({ key, token: headers['x-amz-security-token'] })
    }
    return fetch(input, init)
  }
  const deps = await createDeps(
    {
      TURNLINE_SINGLE_TENANT: '1',
      S3_BUCKET: bucket.bucket,
      S3_ENDPOINT: services.s3.endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      ...env,
    },
    { fetch: watching, ...(chain ? { awsCredentials: () => chain } : {}) },
  )
  await deps.service.sessions.objects.get('probe')
  return seen
}

describe('S3 credentials of a deployment', () => {
  it('takes S3_ACCESS_KEY_ID first, then AWS_ACCESS_KEY_ID with its session token', async () => {
    const aws = {
      AWS_ACCESS_KEY_ID: 'AKIAAWS',
      AWS_SECRET_ACCESS_KEY: 'x',
      AWS_SESSION_TOKEN: 't1',
    }
    const s3 = { S3_ACCESS_KEY_ID: 'AKIAS3', S3_SECRET_ACCESS_KEY: 'y' }
    expect(await signedWith({ ...aws, ...s3 })).toEqual([{ key: 'AKIAS3', token: undefined }])
    expect(await signedWith(aws)).toEqual([{ key: 'AKIAAWS', token: 't1' }])
  })

  it("asks the entry's credential chain when no keys are set, before each request", async () => {
    let asked = 0
    const chain = async () => {
      asked += 1
      return { accessKeyId: 'AKIAROLE', secretAccessKey: 'z', sessionToken: `role-${asked}` }
    }
    expect(await signedWith({}, chain)).toEqual([{ key: 'AKIAROLE', token: 'role-1' }])
  })

  it('refuses to start without keys where the runtime has no chain', async () => {
    await expect(signedWith({})).rejects.toBeInstanceOf(ConfigError)
  })
})
