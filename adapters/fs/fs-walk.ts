/**
 * Walks the fs store's folders in key order for a listing. Each folder is read once, its
 * entries sorted by the key prefix they stand for (a folder `x` as `x/`), so a depth-first walk
 * yields keys in global byte order and the caller can stop after one page. Subtrees that cannot
 * contribute (outside the prefix, before the resume point) are never read; a subtree that folds
 * into one delimiter prefix yields only its first key.
 */
import type { Dirent } from 'node:fs'
import { lstat, readdir } from 'node:fs/promises'
import type { ListedObject } from '../../src/ports/object-store.ts'
import { compareKeys } from '../../src/shared/compare-keys.ts'
import {
  canSkipSubtree,
  foldedPrefix,
  isBeforeStart,
  type ListingPlan,
} from '../shared/object-store-listing.ts'
import { type HeldFolder, holdChild, holdFolder } from './fs-folder-handles.ts'
import { errnoOf, listingBase, storageError, WORK_DIR } from './fs-key-path.ts'
import { SymlinkInStore } from './fs-no-follow.ts'

interface Item {
  name: string
  keyPart: string
  isDir: boolean
}

/** Errors that mean a folder or file is not there (any more) or is not what the walk needs. */
const SKIPPED = new Set(['ENOENT', 'ENOTDIR'])

/**
 * Keys (with sizes) under `plan.prefix`, in key order, starting near the resume point. `root` is
 * the store's real root (undefined: it does not exist yet, so nothing is listed). Every folder is
 * opened afresh through its parent's descriptor, never through a link: a link in the store is
 * not listed, and nothing behind it is.
 */
export async function* walkKeys(
  root: string | undefined,
  plan: ListingPlan,
): AsyncGenerator<ListedObject> {
  if (root === undefined) return
  const base = listingBase(root, plan.prefix)
  if (base === undefined) return
  let folder: HeldFolder
  try {
    ;({ folder } = await holdFolder(root, base.path, { fresh: true }))
  } catch (error) {
    if (error instanceof SymlinkInStore || SKIPPED.has(errnoOf(error) ?? '')) return
    throw storageError(error, 'list', base.dirKey)
  }
  try {
    yield* walkDir(folder, base.dirKey, plan)
  } finally {
    folder.release()
  }
}

async function* walkDir(
  folder: HeldFolder,
  dirKey: string,
  plan: ListingPlan,
): AsyncGenerator<ListedObject> {
  for (const item of await readItems(folder, dirKey)) {
    if (canSkipSubtree(plan, item.keyPart)) continue
    if (!item.isDir) {
      if (!item.keyPart.startsWith(plan.prefix) || isBeforeStart(plan, item.keyPart)) continue
      const size = await sizeOf(folder, item.name, item.keyPart)
      if (size !== undefined) yield { key: item.keyPart, size }
      continue
    }
    const child = await holdChild(folder, item.name).catch((error: unknown) => {
      if (error instanceof SymlinkInStore || SKIPPED.has(errnoOf(error) ?? '')) return undefined
      throw storageError(error, 'list', item.keyPart)
    })
    if (child === undefined) continue
    try {
      const inside = walkDir(child, item.keyPart, plan)
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
    } finally {
      child.release()
    }
  }
}

async function readItems(folder: HeldFolder, dirKey: string): Promise<Item[]> {
  let entries: Dirent[]
  try {
    entries = await readdir(folder.child(''), { withFileTypes: true })
  } catch (error) {
    if (SKIPPED.has(errnoOf(error) ?? '')) return []
    throw storageError(error, 'list', dirKey)
  }
  const items: Item[] = []
  for (const entry of entries) {
    if (dirKey === '' && entry.name === WORK_DIR) continue
    if (entry.name.includes('\\')) continue
    // Links are neither: a link is not listed, and what it points to is not walked.
    if (entry.isDirectory())
      items.push({ name: entry.name, keyPart: `${dirKey}${entry.name}/`, isDir: true })
    else if (entry.isFile())
      items.push({ name: entry.name, keyPart: `${dirKey}${entry.name}`, isDir: false })
  }
  return items.sort((a, b) => compareKeys(a.keyPart, b.keyPart))
}

/** The size of a regular file in the folder; undefined when it is gone or no longer a file. */
async function sizeOf(folder: HeldFolder, name: string, key: string): Promise<number | undefined> {
  try {
    const info = await lstat(folder.child(name))
    return info.isFile() ? info.size : undefined
  } catch (error) {
    // Deleted while we walked: simply not listed.
    if (SKIPPED.has(errnoOf(error) ?? '')) return undefined
    throw storageError(error, 'stat', key)
  }
}
