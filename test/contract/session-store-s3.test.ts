import { afterAll, beforeAll } from 'vitest'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'
import { describeSessionStore } from './session-store.suite.ts'

let bucket: Awaited<ReturnType<typeof createTestBucket>>
let stores = 0

beforeAll(async () => {
  bucket = await createTestBucket(requireServices().s3, 'sessions')
})
afterAll(async () => {
  await bucket?.destroy()
})

describeSessionStore('s3 (moto)', async () => ({
  store: bucket.store(`p${++stores}`),
  cleanup: async () => {},
}))
