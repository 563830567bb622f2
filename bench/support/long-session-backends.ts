/**
 * The stores of bench/long-session.ts's server mode, and what each lets the bench see from
 * outside the server process after every turn. `fs` (the default configuration): the data folder
 * on disk (disk-writes.ts) — bytes written, no request counts. `s3`: a bucket on moto and the
 * Upstash REST proxy over redis-server (`npm run services:start`), each noting its own requests,
 * read by a process of their own (store-peers.ts) — every request to either store counted, and
 * the bytes of the bodies sent to S3.
 */
import { join } from 'node:path'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { diskWatch } from './disk-writes.ts'
import { countedS3Deployment } from './user-path-variants.ts'

/** What a backend tells of one turn (NaN: not seen by this backend). */
export interface TurnWrites {
  bytesWritten: number
  turnIndexBytes: number
  objectRequests: number
  coordinatorTrips: number
}

export interface LongSessionBackend {
  name: string
  /** What the server is told of its stores. */
  env: Record<string, string>
  /** Forgets what happened so far (the session's creation). */
  start(): Promise<void>
  afterTurn(): Promise<TurnWrites>
  /** A new adapter on the session's store, read directly (nothing cached, nothing counted). */
  store(): ObjectStore
  close(): Promise<void>
}

export function fsBackend(dir: string): LongSessionBackend {
  const dataDir = join(dir, 'data')
  let disk: Awaited<ReturnType<typeof diskWatch>> | undefined
  return {
    name: 'fs',
    env: {},
    async start() {
      disk = await diskWatch(dataDir, (path) => path.endsWith('/index/turns.json'))
    },
    async afterTurn() {
      if (!disk) throw new Error('start() first')
      const written = await disk.take()
      return {
        bytesWritten: written.bytes,
        turnIndexBytes: written.trackedBytes,
        objectRequests: Number.NaN,
        coordinatorTrips: Number.NaN,
      }
    },
    store: () => new FsObjectStore({ root: dataDir }),
    close: async () => {},
  }
}

export async function s3Backend(): Promise<LongSessionBackend> {
  const deployment = await countedS3Deployment('longsession')
  return {
    name: 's3',
    env: deployment.env,
    async start() {
      await deployment.stores.trips()
    },
    async afterTurn() {
      const trips = await deployment.stores.trips()
      return {
        bytesWritten: trips.s3Bytes,
        turnIndexBytes: Number.NaN,
        objectRequests: trips.s3,
        coordinatorTrips: trips.upstash,
      }
    },
    store: deployment.store,
    close: deployment.close,
  }
}
