import { parseArgs } from 'node:util'
import { S3ObjectStore } from '../../adapters/s3/s3-object-store.ts'
import { createDeps } from '../deps.ts'
import { claimedDeps, onStartupError } from './entry-app.ts'
import { nodeBackends } from './node-backends.ts'
import { checkStorage } from './storage-check.ts'

/**
 * `node dist/node/check.mjs [--create-bucket]` (from source: `npx tsx functions/entries/check-deployment.ts`):
 * reads the same environment as the server and checks that its object store honours conditional
 * writes and that its coordinator answers. `--create-bucket` first creates S3_BUCKET when it does
 * not exist (self-hosted S3 such as MinIO). Exit code 0 when every check passed, 1 otherwise,
 * 2 on a configuration error.
 */
const { values } = parseCommandLine()

// The bucket is created before the deployment claims its Redis namespace: the claim reads the
// deployment's id from the bucket.
const unclaimed = await createDeps(process.env, nodeBackends).catch(
  onStartupError((code) => process.exit(code), 2),
)
const store = unclaimed.service.sessions.objects
if (values['create-bucket']) await createBucket(store)
const deps = await claimedDeps(unclaimed).catch(onStartupError((code) => process.exit(code), 2))
const where = deps.notices.filter((n) =>
  /^sessions in|^coordination in|leases and|^Redis keys under/.test(n),
)
for (const line of where) console.log(`turnline: ${line}`)

const result = await checkStorage(store, deps.service.coordinator)
for (const line of result.lines) console.log(line)
console.log(result.ok ? 'turnline: storage checks passed' : 'turnline: storage checks FAILED')
process.exit(result.ok ? 0 : 1)

/** An option it does not know is a usage error (exit 2), not a failed check (exit 1). */
function parseCommandLine() {
  try {
    return parseArgs({ options: { 'create-bucket': { type: 'boolean' } }, strict: true })
  } catch (error) {
    console.error(`turnline: ${(error as Error).message}\nusage: check.mjs [--create-bucket]`)
    process.exit(2)
  }
}

async function createBucket(objects: typeof store): Promise<void> {
  if (!(objects instanceof S3ObjectStore)) {
    console.error('turnline: --create-bucket needs an S3 store (S3_BUCKET)')
    process.exit(2)
  }
  const outcome = await objects.client.createBucket()
  const name = objects.bucket
  console.log(
    outcome === 'created' ? `turnline: created bucket ${name}` : `turnline: bucket ${name} exists`,
  )
}
