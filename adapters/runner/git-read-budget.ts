import { opendirSync } from 'node:fs'

/**
 * What one reading of a workspace's `.git` (git-objects.ts) may load and search in all. The
 * repository is the tenant's and can ask for far more than any history the reading shows needs:
 * objects that inflate a thousandfold, a commit naming tens of thousands of parents (one object
 * file hard-linked under every name costs its bytes once), folders of millions of names, pack
 * indexes by the thousand, each searched for every object looked up. The runner serves every
 * tenant from one process and thread: a reading pauses for its other requests as it goes
 * (src/shared/event-loop-pacer.ts), one reading at a time, and past these bounds (or its time on
 * the thread, git-recent-log.ts) it stops and is left to git, run in the sandbox under the
 * tenant's own limits.
 */
const LIMITS = {
  /** Pack indexes, object files and inflated objects (a 50-commit walk needs a few MB). */
  bytes: 128 * 1024 * 1024,
  /** Commits and pack entries read (50 commits, their parents and delta bases). */
  objects: 2000,
  /**
   * Names listed in object folders: git packs loose objects once there are 6700 (gc.auto), and
   * abbreviating a commit scans its folder's names once per length tried (up to 34 times).
   */
  names: 10_000,
  /**
   * Steps of binary searches in pack indexes, each through every index, for each object looked
   * up and each abbreviation length tried (a 5-commit walk over 50 packs takes some 40 000).
   */
  steps: 1_000_000,
}

export type GitReadCost = Partial<Record<keyof typeof LIMITS, number>>

export class GitReadBudget {
  readonly #spent = { bytes: 0, objects: 0, names: 0, steps: 0 }

  /** Counts `cost`; says which bound the reading has passed, if any. */
  spend(cost: GitReadCost): string | undefined {
    for (const key of ['bytes', 'objects', 'names', 'steps'] as const) {
      this.#spent[key] += cost[key] ?? 0
      if (this.#spent[key] > LIMITS[key]) {
        return `the repository needs more than ${LIMITS[key]} ${key} read`
      }
    }
    return undefined
  }

  /**
   * The names in the folder at `path` (a `/proc/self/fd` path), listed one entry at a time so
   * a huge folder is never read whole; undefined once they pass the bound on names.
   */
  names(path: string): string[] | undefined {
    const dir = opendirSync(path)
    try {
      const names: string[] = []
      for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
        if (this.spend({ names: 1 }) !== undefined) return undefined
        names.push(entry.name)
      }
      return names
    } finally {
      dir.closeSync()
    }
  }
}
