import { afterAll, beforeAll, describe } from 'vitest'
import { loopEntryRaces } from '../support/loop-entry-races.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'

/**
 * The loop entries' races on S3 (moto_server): its DeleteObject is not conditional (moto ignores
 * If-Match on it), so the entry comes back only through the checks the pass and the starter make.
 */
const services = requireServices()
let bucket: Awaited<ReturnType<typeof createTestBucket>>
let cases = 0

beforeAll(async () => {
  bucket = await createTestBucket(services.s3, 'loop-entries')
})

afterAll(async () => {
  await bucket?.destroy()
})

describe('a pass deleting a loop entry while a start writes it again (S3)', () => {
  loopEntryRaces(() => bucket.store(`case-${++cases}`))
})
