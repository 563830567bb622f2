import { requireServices } from '../../test/support/services.ts'
import { createTestBucket } from '../../test/support/test-bucket.ts'

/** An S3 store on the local moto_server (from `npm run services:start` or TURNLINE_TEST_S3_*). */
export async function benchS3Store() {
  const bucket = await createTestBucket(requireServices().s3, 'bench')
  return { store: bucket.store('bench'), destroy: () => bucket.destroy() }
}
