/**
 * Counts fsync/fdatasync calls made anywhere in this process, for benchmarks: the FileHandle
 * methods (what the fs adapter's folder syncs and the raw loop use), the callback and sync forms
 * of `node:fs`, and those the fs adapter's writer threads report (their `node:fs` is their own).
 * An earlier revision loaded by `--before` has its own copy of the writer threads' module: its
 * count is added with `countWriterThreadsOf`. Install once before the work to be counted; read
 * `fsyncCount()` around it.
 */
import fs from 'node:fs'
import { open, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { writerThreadFsyncs } from '../../adapters/fs/fs-writer-threads.ts'

let syncs = 0
let installed = false
const writerThreadCounts = new Set<() => number>([writerThreadFsyncs])

export function fsyncCount(): number {
  let total = syncs
  for (const count of writerThreadCounts) total += count()
  return total
}

/** Adds the fsyncs of another source tree's writer threads (a `--before` revision's). */
export async function countWriterThreadsOf(root: string): Promise<void> {
  const module = (await import(join(root, 'adapters/fs/fs-writer-threads.ts')).catch(
    () => ({}),
  )) as { writerThreadFsyncs?: () => number }
  if (module.writerThreadFsyncs) writerThreadCounts.add(module.writerThreadFsyncs)
}

export async function installFsyncCounter(scratchDir: string): Promise<void> {
  if (installed) return
  installed = true
  const probe = join(scratchDir, `.fsync-probe-${process.pid}`)
  const handle = await open(probe, 'w')
  const proto = Object.getPrototypeOf(handle) as Record<string, unknown>
  await handle.close()
  await rm(probe, { force: true })
  for (const name of ['sync', 'datasync'] as const) {
    const original = proto[name] as (this: unknown) => Promise<void>
    proto[name] = function counted(this: unknown) {
      syncs++
      return original.call(this)
    }
  }
  const mutable = fs as unknown as Record<string, (...args: unknown[]) => unknown>
  for (const name of ['fsync', 'fdatasync', 'fsyncSync', 'fdatasyncSync'] as const) {
    const original = mutable[name]
    if (typeof original !== 'function') continue
    mutable[name] = (...args: unknown[]) => {
      syncs++
      return original.apply(fs, args)
    }
  }
}
