/**
 * Walks the fs store's folders in key order for a listing. Each folder is read once, its
 * entries sorted by the key prefix they stand for (a folder `x` as `x/`), so a depth-first walk
 * yields keys in global byte order and the caller can stop after one page. Subtrees that cannot
 * contribute (outside the prefix, before the resume point) are never read; a subtree that folds
 * into one delimiter prefix yields only its first key.
 */
import type { Dirent } from 'node:fs'
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { ListedObject } from '../../src/ports/object-store.ts'
import {
  canSkipSubtree,
  compareKeys,
  foldedPrefix,
  isBeforeStart,
  type ListingPlan,
} from '../../src/ports/object-store-listing.ts'
import { errnoOf, listingBase, storageError, WORK_DIR } from './fs-key-path.ts'

interface Item {
  name: string
  keyPart: string
  isDir: boolean
}

/** Keys (with sizes) under `plan.prefix`, in key order, starting near the resume point. */
export async function* walkKeys(root: string, plan: ListingPlan): AsyncGenerator<ListedObject> {
  const base = listingBase(root, plan.prefix)
  if (base === undefined) return
  yield* walkDir(base.path, base.dirKey, plan)
}

async function* walkDir(
  path: string,
  dirKey: string,
  plan: ListingPlan,
): AsyncGenerator<ListedObject> {
  for (const item of await readItems(path, dirKey)) {
    if (canSkipSubtree(plan, item.keyPart)) continue
    const itemPath = join(path, item.name)
    if (!item.isDir) {
      if (!item.keyPart.startsWith(plan.prefix) || isBeforeStart(plan, item.keyPart)) continue
      const size = await sizeOf(itemPath, item.keyPart)
      if (size !== undefined) yield { key: item.keyPart, size }
      continue
    }
    const inside = walkDir(itemPath, item.keyPart, plan)
    const folds =
      item.keyPart.startsWith(plan.prefix) && foldedPrefix(plan, item.keyPart) !== undefined
    if (!folds) {
      yield* inside
      continue
    }
    // The whole folder folds into one prefix: one live key proves it exists.
    for await (const entry of inside) {
      if (isBeforeStart(plan, entry.key)) continue
      yield entry
      break
    }
  }
}

async function readItems(path: string, dirKey: string): Promise<Item[]> {
  let entries: Dirent[]
  try {
    entries = await readdir(path, { withFileTypes: true })
  } catch (error) {
    const errno = errnoOf(error)
    if (errno === 'ENOENT' || errno === 'ENOTDIR') return []
    throw storageError(error, 'list', dirKey)
  }
  const items: Item[] = []
  for (const entry of entries) {
    if (dirKey === '' && entry.name === WORK_DIR) continue
    if (entry.name.includes('\\')) continue
    if (entry.isDirectory())
      items.push({ name: entry.name, keyPart: `${dirKey}${entry.name}/`, isDir: true })
    else if (entry.isFile())
      items.push({ name: entry.name, keyPart: `${dirKey}${entry.name}`, isDir: false })
  }
  return items.sort((a, b) => compareKeys(a.keyPart, b.keyPart))
}

async function sizeOf(path: string, key: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size
  } catch (error) {
    // Deleted while we walked: simply not listed.
    if (errnoOf(error) === 'ENOENT') return undefined
    throw storageError(error, 'stat', key)
  }
}
