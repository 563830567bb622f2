import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { warmWriterThreads } from '../../adapters/fs/fs-writer-threads.ts'

/**
 * The fs store of a long-running server (Node, Deno), its first writer thread started as the
 * store is made — while the deps are still built and the embedded runner probes its sandbox —
 * instead of at the first write. A thread takes tens of ms to start on a quiet machine and
 * hundreds under load, and a fresh process's first session waited for it: 460–540 ms to create
 * against ≈ 90 ms once started early, at load ≈ 13 (docs/performance.md, cold start).
 */
export function warmedFsStore(root: string): FsObjectStore {
  warmWriterThreads()
  const store = new FsObjectStore({ root })
  store.prepareAhead()
  return store
}
