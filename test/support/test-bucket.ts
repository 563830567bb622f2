import { S3ObjectStore } from '../../adapters/s3/s3-object-store.ts'
import { S3Rest } from '../../adapters/s3/s3-rest.ts'
import { listAll } from '../../src/store/list-all.ts'
import type { TestS3 } from './services.ts'

/** A fresh, uniquely named bucket on the local S3 emulator, and stores under its prefixes. */
export async function createTestBucket(s3: TestS3, label: string) {
  const bucket = `turnline-${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`
  const client = new S3Rest({
    bucket,
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  })
  await client.createBucket()
  return {
    bucket,
    client,
    store: (prefix = '') => new S3ObjectStore({ bucket, prefix, client }),
    async destroy() {
      const everything = new S3ObjectStore({ bucket, client })
      for (const { key } of (await listAll(everything, '')).objects) await everything.delete(key)
      await client.deleteBucket()
    },
  }
}
