import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { OUTPUT_CHUNK_BYTES } from '../../src/contract/output-artifact.ts'
import { captureOutput } from '../../src/core/tools/output-capture.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { listAll } from '../../src/store/list-all.ts'
import { OutputArtifacts } from '../../src/store/output-artifacts.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'

/**
 * Output artifacts on the real stores: the fs store and S3 (moto). A 3.5 MB answer streamed in
 * small pieces is stored in 1 MiB chunks, reads back byte-identical and by range, and the same
 * answer again adds no object.
 */
const services = requireServices()
let dir: string
let bucket: Awaited<ReturnType<typeof createTestBucket>>

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-output-stores-'))
  bucket = await createTestBucket(services.s3, 'outputs')
})

afterAll(async () => {
  await bucket?.destroy()
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** The answer as a response body that arrives in pieces of 64 KiB. */
function streamed(bytes: Uint8Array): Response {
  let at = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.byteLength) return controller.close()
      controller.enqueue(bytes.slice(at, at + 65_536))
      at += 65_536
    },
  })
  return new Response(body)
}

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

async function collect(chunks: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = []
  for await (const chunk of chunks) parts.push(chunk)
  return Buffer.concat(parts)
}

const stores: [string, () => ObjectStore][] = [
  ['fs', () => new FsObjectStore({ root: join(dir, 'store') })],
  ['s3 (moto)', () => bucket.store('prefix')],
]

describe.each(stores)('output artifacts on the %s store', (_name, open) => {
  it('stores a streamed answer in chunks, reads it back whole and by range, and once', async () => {
    const store = open()
    const outputs = new OutputArtifacts(store, 'acme/default/.vtcode/sessions/s1/')
    const answer = new Uint8Array(Buffer.from(randomBytes(1_750_000).toString('hex')))
    const keeping = { artifacts: outputs, maxBytes: 8 << 20 }
    const captured = await captureOutput(streamed(answer), 64 * 1024, keeping)
    if (captured.kind !== 'artifact') throw new Error(captured.kind)
    const { artifact } = captured
    expect(artifact.chunks).toHaveLength(4)
    expect(sha(await collect(outputs.read(artifact)))).toBe(sha(answer))
    const opened = await outputs.open(artifact.id)
    const range = [OUTPUT_CHUNK_BYTES - 100, 3 * OUTPUT_CHUNK_BYTES + 100] as const
    expect(sha(await collect(opened.read(...range)))).toBe(sha(answer.subarray(...range)))

    const before = (await listAll(store, 'acme/')).objects.length
    expect(before).toBe(5)
    const again = await captureOutput(streamed(answer), 64 * 1024, keeping)
    expect(again.kind === 'artifact' && again.artifact.id).toBe(artifact.id)
    expect((await listAll(store, 'acme/')).objects.length).toBe(before)
  })
})
