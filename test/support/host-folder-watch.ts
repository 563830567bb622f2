/**
 * What the fs store's link tests check of the host folder a planted link points at: its entries
 * (type, mode, content) before and after, and every change made in it meanwhile, even one undone
 * before the end (a temp file written there and renamed away, a lock folder made and removed).
 */
import { type FSWatcher, watch } from 'node:fs'
import { lstat, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { isTurnlineError } from '../../src/contract/errors.ts'

/** Every entry under `dir` with its type and content: what must not change. */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {}
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name)
    const info = await lstat(path)
    result[path.slice(dir.length)] = info.isFile()
      ? `file ${info.mode.toString(8)} ${await readFile(path, 'utf8')}`
      : info.isDirectory()
        ? `dir ${info.mode.toString(8)}`
        : 'other'
  }
  return result
}

/** `ok`, the TurnlineError's code, or the raw error: how an operation ended. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'ok'
  } catch (error) {
    return isTurnlineError(error) ? error.code : `raw ${String(error)}`
  }
}

const SENTINEL = '.watch-sentinel'

/**
 * Watches the folders `dirs` (inotify, not recursive) from now on. `changes()` writes a sentinel
 * file in each and waits until each one's event has come (events arrive in order), then returns
 * every other name that changed meanwhile, as `<dir>/<name>`.
 */
export function watchFolders(dirs: readonly string[]): { changes(): Promise<string[]> } {
  const changed: string[] = []
  const seen = new Set<string>()
  const waiting = new Map<string, () => void>()
  const watchers: FSWatcher[] = dirs.map((dir) =>
    watch(dir, (_, name) => {
      if (name === SENTINEL) {
        seen.add(dir)
        waiting.get(dir)?.()
      } else {
        changed.push(`${dir}/${String(name)}`)
      }
    }),
  )
  return {
    async changes() {
      try {
        await Promise.all(
          dirs.map(async (dir) => {
            const arrived = new Promise<void>((resolve) => waiting.set(dir, resolve))
            await writeFile(join(dir, SENTINEL), 'sentinel')
            if (!seen.has(dir)) await arrived
          }),
        )
        return changed
      } finally {
        for (const watcher of watchers) watcher.close()
      }
    },
  }
}
