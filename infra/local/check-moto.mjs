// Checks that an S3 endpoint implements conditional PUT as AWS does (the storage protocol's
// commit point depends on it). Usage:
//   node infra/local/check-moto.mjs [endpoint]
// Without an endpoint it uses the S3 endpoint of .tmp/services.json (npm run services:start).
import { readFileSync } from 'node:fs'
import {
  CreateBucketCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3'

function endpointFromState() {
  const file = new URL('../../.tmp/services.json', import.meta.url)
  try {
    return JSON.parse(readFileSync(file, 'utf8')).s3.endpoint
  } catch {
    throw new Error('no endpoint given and no .tmp/services.json: run npm run services:start')
  }
}

const endpoint = process.argv[2] ?? endpointFromState()
const s3 = new S3Client({
  endpoint,
  region: 'us-east-1',
  forcePathStyle: true,
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
})
const Bucket = `check-${Date.now()}`
let failures = 0

async function status(command) {
  try {
    const out = await s3.send(command)
    return { status: out.$metadata.httpStatusCode ?? 200, etag: out.ETag }
  } catch (error) {
    if (error instanceof S3ServiceException) {
      return { status: error.$metadata.httpStatusCode, code: error.name }
    }
    throw error
  }
}

function expect(label, actual, expected) {
  const ok = actual.status === expected
  if (!ok) failures++
  const extra = actual.code ? ` ${actual.code}` : ''
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${label}: ${actual.status}${extra} (want ${expected})`)
}

await s3.send(new CreateBucketCommand({ Bucket }))
const put = (Key, Body, extra = {}) => new PutObjectCommand({ Bucket, Key, Body, ...extra })

const first = await status(put('a', 'one', { IfNoneMatch: '*' }))
expect('create-only PUT of a new key', first, 200)
expect(
  'create-only PUT of an existing key',
  await status(put('a', 'two', { IfNoneMatch: '*' })),
  412,
)
const second = await status(put('a', 'three', { IfMatch: first.etag }))
expect('PUT with the current ETag', second, 200)
expect('PUT with a stale ETag', await status(put('a', 'four', { IfMatch: first.etag })), 412)
expect('PUT If-Match on a missing key', await status(put('missing', 'x', { IfMatch: '"0"' })), 404)

const racers = await Promise.all(
  Array.from({ length: 20 }, (_, i) => status(put('race', `r${i}`, { IfNoneMatch: '*' }))),
)
const winners = racers.filter((r) => r.status === 200).length
const losers = racers.filter((r) => r.status === 412 || r.status === 409).length
const raceOk = winners === 1 && losers === 19
if (!raceOk) failures++
console.log(
  `${raceOk ? 'ok  ' : 'FAIL'} 20 racing create-only PUTs: ${winners} won, ${losers} lost`,
)

const body = await (
  await s3.send(new GetObjectCommand({ Bucket, Key: 'a' }))
).Body?.transformToString()
expect('object keeps the last accepted write', { status: body === 'three' ? 200 : 500 }, 200)

if (failures > 0) {
  console.error(`${failures} conditional-write check(s) failed against ${endpoint}`)
  process.exit(1)
}
console.log(`conditional writes behave as AWS S3 at ${endpoint}`)
