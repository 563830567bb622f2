import nodeModule from 'node:module'

/** `node:module`'s compile cache (Node ≥ 22.1; flushing ≥ 22.10), absent from Node 20's types. */
interface CompileCacheModule {
  enableCompileCache?: (directory?: string) => { status: number; message?: string }
  flushCompileCache?: () => void
}

/**
 * Loads a Node program (`load`, its module graph imported dynamically) with Node's compile cache
 * on where the runtime has it: V8's code for our modules and their packages is kept on disk
 * and reused by the next start instead of compiled again. The cache's folder is Node's default,
 * `<os.tmpdir()>/node-compile-cache` (entries keyed by each file's content, checked when read),
 * or NODE_COMPILE_CACHE's; NODE_DISABLE_COMPILE_CACHE=1 turns it off (Node reads both). On Node
 * 20 this only loads the program. Once the program has loaded, what was compiled so far is
 * written out, so that a process ended by a signal has still left its cache.
 */
export async function loadWithCompileCache(load: () => Promise<unknown>): Promise<void> {
  const cache = nodeModule as CompileCacheModule
  cache.enableCompileCache?.()
  await load()
  cache.flushCompileCache?.()
}
