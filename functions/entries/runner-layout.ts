import { lstat, mkdir, readdir, realpath, rename, stat } from 'node:fs/promises'
import path from 'node:path'
import { STORE_ROOT_FOLDERS } from '../../src/contract/store-root-folders.ts'
import { ConfigError } from '../env-config.ts'

/** Where the embedded runner keeps its workspaces, and what was said about the layout. */
export interface RunnerLayout {
  /** Absolute folder of the workspaces (and the runner's bookkeeping, `.runner-state`). */
  root: string
  notices: string[]
  warnings: string[]
}

/**
 * The embedded runner's tree, never inside the session store's: TURNLINE_RUNNER_ROOT, by default
 * a sibling of TURNLINE_DATA_DIR (`./.turnline` → `./.turnline-runner`), since a tenant's
 * folder in the store is named by the tenant and the runner's root must not be one of them.
 */
export function defaultRunnerRoot(dataDir: string): string {
  return `${path.resolve(dataDir)}-runner`
}

const within = (outer: string, inner: string) =>
  inner === outer || inner.startsWith(outer.endsWith(path.sep) ? outer : outer + path.sep)

/**
 * Prepares the embedded runner's root: refuses one that shares a tree with the filesystem store
 * (`storeDir`), moves the workspaces an earlier version kept in `<data dir>/runner` there, and —
 * with several tenants — warns when the workspaces share a filesystem with the sessions (a
 * tenant who fills the disk would stop every tenant's commits).
 */
export async function prepareRunnerLayout(input: {
  root: string | undefined
  dataDir: string
  storeDir: string | undefined
  multiTenant: boolean
}): Promise<RunnerLayout> {
  const root = path.resolve(input.root ?? defaultRunnerRoot(input.dataDir))
  const notices: string[] = []
  const warnings: string[] = []
  const store = input.storeDir === undefined ? undefined : path.resolve(input.storeDir)
  if (store !== undefined) refuseShared(store, root)

  const legacy = path.join(path.resolve(input.dataDir), STORE_ROOT_FOLDERS.legacyRunner)
  const moved = await migrateLegacy(legacy, root)
  if (moved?.moved) notices.push(moved.say)
  else if (moved) warnings.push(moved.say)
  await mkdir(root, { recursive: true }).catch((error: Error) => {
    throw new ConfigError([
      `TURNLINE_RUNNER_ROOT: cannot create the runner's workspace folder ${root} (${error.message}); ` +
        "set it to a folder this server's user may create, outside TURNLINE_DATA_DIR",
    ])
  })
  if (store === undefined) return { root, notices, warnings }

  await mkdir(store, { recursive: true })
  const [realStore, realRoot] = [await realpath(store), await realpath(root)]
  refuseShared(realStore, realRoot)
  if (input.multiTenant && (await stat(realStore)).dev === (await stat(realRoot)).dev) {
    warnings.push(
      `the runner's workspaces (TURNLINE_RUNNER_ROOT=${root}) are on the same filesystem as the ` +
        `sessions (TURNLINE_DATA_DIR=${store}): a tenant whose commands fill the disk stops every ` +
        "tenant's commits. Put TURNLINE_RUNNER_ROOT on a filesystem of its own (docs/configuration.md#layout).",
    )
  }
  return { root, notices, warnings }
}

function refuseShared(store: string, root: string): void {
  if (within(store, root) || within(root, store)) {
    throw new ConfigError([
      `TURNLINE_RUNNER_ROOT: ${root} shares a folder tree with the sessions in TURNLINE_DATA_DIR ` +
        `(${store}); a tenant's folder there is named by the tenant, so the runner's workspaces ` +
        'must live elsewhere (unset it for the default beside TURNLINE_DATA_DIR)',
    ])
  }
}

/**
 * Moves `<data dir>/runner`, where earlier versions kept the workspaces, to `root` — when it is
 * a real folder, holds no tenant's sessions (a tenant named "runner" has a `.turnline` folder
 * there) and `root` is missing or empty. Otherwise it is left in place, and what is said names
 * why and what to do. Undefined when there is nothing to move.
 */
async function migrateLegacy(
  legacy: string,
  root: string,
): Promise<{ moved: boolean; say: string } | undefined> {
  const info = await lstat(legacy).catch(() => undefined)
  if (!info?.isDirectory() || legacy === root) return undefined
  // Unreadable: nothing this server could move (nor use).
  const entries = await readdir(legacy).catch(() => [] as string[])
  if (entries.length === 0) return undefined
  const left = (why: string) => ({
    moved: false,
    say:
      `${legacy} holds the runner's workspaces of an earlier version and is left in place, ` +
      `unused (sessions started before keep their logs but find an empty workspace): ${why}`,
  })
  if (entries.includes(STORE_ROOT_FOLDERS.deployment)) {
    return left(
      `it also holds the sessions of a tenant named "runner"; move the runner's folders ` +
        `(.runner-state and one per tenant) to ${root} by hand`,
    )
  }
  const target = await readdir(root).catch(() => undefined)
  if (target !== undefined && target.length > 0) {
    return left(`${root} is in use already; move what you need from it to there, then delete it`)
  }
  try {
    await mkdir(path.dirname(root), { recursive: true })
    // Onto a missing or empty folder, in one atomic step.
    await rename(legacy, root)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    // Moved by another process starting at the same time.
    if (code === 'ENOENT') return undefined
    const why = code === 'EXDEV' ? 'it is on another filesystem' : (error as Error).message
    return left(
      `it could not be moved to ${root} (${why}); stop the server and move it by hand ` +
        `(mv ${legacy}/.runner-state ${legacy}/* ${root}/)`,
    )
  }
  return {
    moved: true,
    say: `moved the runner's workspaces from ${legacy} (inside the data dir, the layout of earlier versions) to ${root}`,
  }
}
