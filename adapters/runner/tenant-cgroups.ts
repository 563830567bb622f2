import { execFile } from 'node:child_process'
import { access, mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { alive } from './process-tree.ts'
import type { TenantLimits } from './sandbox-settings.ts'

/** The controllers a tenant's cgroup limits. */
export type CgroupController = 'pids' | 'memory'
const CONTROLLERS: readonly CgroupController[] = ['pids', 'memory']
const MIB = 1024 * 1024

/** Where one controller is managed: the runner's folder in a v2 or a v1 hierarchy. */
interface Hierarchy {
  version: 1 | 2
  /** `<the runner's own cgroup>/turnline-<the runner's pid>`. */
  base: string
}

/** What the runner found at start, for its status. */
export interface CgroupStatus {
  /** Per controller: `v2 <dir>` / `v1 <dir>`, or why it is not limited. */
  pids: string
  memory: string
}

interface Mount {
  root: string
  point: string
  type: string
  options: string[]
}

async function mounts(): Promise<Mount[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '')
  return text
    .split('\n')
    .map((line) => {
      const [left, right] = line.split(' - ')
      const fields = left?.split(' ') ?? []
      const tail = right?.split(' ') ?? []
      return {
        root: fields[3] ?? '',
        point: (fields[4] ?? '').replace(/\\040/g, ' '),
        type: tail[0] ?? '',
        options: (tail[2] ?? '').split(','),
      }
    })
    .filter((m) => m.type === 'cgroup' || m.type === 'cgroup2')
}

/** The folder of this process's cgroup in a mount (its path made relative to the mount's root). */
function ownDir(mount: Mount, cgroupPath: string): string {
  const rel = mount.root === '/' ? cgroupPath : path.posix.relative(mount.root, cgroupPath) || '/'
  return path.join(mount.point, rel.startsWith('..') ? '/' : rel)
}

const canWrite = (file: string) =>
  access(file, 2).then(
    () => true,
    () => false,
  )

/**
 * A cgroup per tenant, below the runner's own: `pids.max` and `memory.max` (v2), or the v1
 * `pids` and `memory` controllers where the host mounts them apart (a hybrid host). Commands join
 * their tenant's cgroup before they start (see tenant-launch.ts), so everything they fork is
 * counted there, whatever its uid or namespace.
 */
export class TenantCgroups {
  private constructor(
    private readonly places: ReadonlyMap<CgroupController, Hierarchy>,
    private readonly limits: TenantLimits,
    readonly status: CgroupStatus,
  ) {}

  /** Finds and prepares the hierarchies; `undefined` cgroups when no controller is usable. */
  static async open(
    limits: TenantLimits,
  ): Promise<{ cgroups: TenantCgroups | undefined; status: CgroupStatus }> {
    // One folder per runner process: a runner that stops (or another runner on the same root)
    // never removes the cgroups of one still running.
    const name = `${PREFIX}${process.pid}`
    const own = (await readFile('/proc/self/cgroup', 'utf8').catch(() => ''))
      .split('\n')
      .map((line) => line.split(':'))
    const all = await mounts()
    const places = new Map<CgroupController, Hierarchy>()
    const why: Record<CgroupController, string> = {
      pids: 'no writable cgroup with the pids controller',
      memory: 'no writable cgroup with the memory controller',
    }
    const v2 = all.find((m) => m.type === 'cgroup2')
    const v2Path = own.find((f) => f[0] === '0' && f[1] === '')?.[2]
    if (v2 && v2Path !== undefined) {
      const dir = ownDir(v2, v2Path)
      await sweep(dir)
      const offered = (await readFile(path.join(dir, 'cgroup.controllers'), 'utf8').catch(() => ''))
        .trim()
        .split(/\s+/)
      const wanted = CONTROLLERS.filter((c) => offered.includes(c))
      if (wanted.length > 0) {
        const problem = await delegateV2(dir, name, wanted)
        for (const c of wanted) {
          if (problem) why[c] = `cgroup v2 at ${dir}: ${problem}`
          else places.set(c, { version: 2, base: path.join(dir, name) })
        }
      }
    }
    for (const c of CONTROLLERS.filter((c) => !places.has(c))) {
      const mount = all.find((m) => m.type === 'cgroup' && m.options.includes(c))
      const at = own.find((f) => f[1]?.split(',').includes(c))?.[2]
      if (!mount || at === undefined) continue
      await sweep(ownDir(mount, at))
      const base = path.join(ownDir(mount, at), name)
      try {
        await mkdir(base, { recursive: true })
        if (await canWrite(path.join(base, 'cgroup.procs'))) places.set(c, { version: 1, base })
        else why[c] = `cgroup v1 at ${base} is not writable`
      } catch (error) {
        why[c] = `cgroup v1 ${c}: ${(error as Error).message}`
      }
    }
    const status: CgroupStatus = {
      pids: describe(places.get('pids')) ?? why.pids,
      memory: describe(places.get('memory')) ?? why.memory,
    }
    return { cgroups: places.size ? new TenantCgroups(places, limits, status) : undefined, status }
  }

  /** Which controllers limit tenants. */
  has(controller: CgroupController): boolean {
    return this.places.has(controller)
  }

  /** The `cgroup.procs` files a command of `tenant` joins. */
  procsFiles(tenant: string): string[] {
    const dirs = new Set([...this.places.values()].map((p) => this.#dir(p, tenant)))
    return [...dirs].map((dir) => path.join(dir, 'cgroup.procs'))
  }

  /** A prefix keeps tenant names off the controllers' own files (`pids.max`, `cgroup.procs`). */
  #dir(place: Hierarchy, tenant: string): string {
    return path.join(place.base, `t-${tenant}`)
  }

  /**
   * Makes (again, should anything have removed them) the tenant's cgroups
   * and writes their limits: before every request, so a launch always finds them.
   */
  async ensure(tenant: string): Promise<void> {
    const v2 = [...this.places].filter(([, p]) => p.version === 2).map(([c]) => `+${c}`)
    for (const [controller, place] of this.places) {
      const dir = this.#dir(place, tenant)
      if (place.version === 2) {
        await mkdir(place.base, { recursive: true })
        await writeFile(path.join(place.base, 'cgroup.subtree_control'), v2.join(' '))
      }
      await mkdir(dir, { recursive: true })
      for (const [file, value, optional] of limitFiles(controller, place.version, this.limits)) {
        const target = path.join(dir, file)
        if (optional) await writeFile(target, value).catch(() => {})
        else await writeFile(target, value)
      }
    }
  }

  /** Removes one tenant's cgroups (once no process is in them). */
  async forget(tenant: string): Promise<void> {
    for (const place of this.places.values()) await rmdir(this.#dir(place, tenant)).catch(() => {})
  }

  /**
   * Removes this runner's cgroups at its end. The processes of commands it just ended may take a
   * moment to leave them, so it tries again for a few seconds.
   */
  async close(): Promise<void> {
    for (let tries = 0; tries < 40; tries++) {
      let left = 0
      for (const place of new Set(this.places.values())) {
        if (!(await removeTree(place.base))) left += 1
      }
      if (left === 0) return
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

const PREFIX = 'turnline-'

/** rmdir of a runner's folder after its tenants' (only empty cgroups go); true when gone. */
async function removeTree(base: string): Promise<boolean> {
  const entries = await readdir(base, { withFileTypes: true }).catch(() => [])
  for (const entry of entries) {
    if (entry.isDirectory()) await rmdir(path.join(base, entry.name)).catch(() => {})
  }
  return rmdir(base).then(
    () => true,
    (error: NodeJS.ErrnoException) => error.code === 'ENOENT',
  )
}

/** Removes what runners that are gone (killed before their end) left in `parent`. */
async function sweep(parent: string): Promise<void> {
  const entries = await readdir(parent, { withFileTypes: true }).catch(() => [])
  for (const entry of entries) {
    if (!entry.isDirectory() || !entry.name.startsWith(PREFIX)) continue
    // A name that is no pid is from an older runner (named by its root): gone when empty.
    const pid = Number(entry.name.slice(PREFIX.length))
    if (Number.isInteger(pid) && (pid === process.pid || alive(pid))) continue
    await removeTree(path.join(parent, entry.name))
  }
}

function describe(place: Hierarchy | undefined): string | undefined {
  return place ? `v${place.version} ${place.base}` : undefined
}

/**
 * The limit files of one controller, in the order they are written; optional ones (swap, which
 * a host may not account) may fail. v1 keeps memory+swap ≥ memory at every step, so it is
 * written on both sides of the memory limit (raising or lowering both works).
 */
function limitFiles(
  controller: CgroupController,
  version: 1 | 2,
  limits: TenantLimits,
): [file: string, value: string, optional: boolean][] {
  if (controller === 'pids') return [['pids.max', String(limits.processes), false]]
  const bytes = String(limits.memoryMb * MIB)
  return version === 2
    ? [
        ['memory.max', bytes, false],
        ['memory.swap.max', '0', true],
      ]
    : [
        ['memory.memsw.limit_in_bytes', bytes, true],
        ['memory.limit_in_bytes', bytes, false],
        ['memory.memsw.limit_in_bytes', bytes, true],
      ]
}

/**
 * cgroup v2 delegation: a cgroup with processes cannot hand controllers to children, so the runner
 * first moves itself into a leaf of its own (`<dir>/runner`), then enables the controllers for
 * `<dir>` and for its tenants' folder. Returns a problem, or undefined when it worked.
 */
async function delegateV2(
  dir: string,
  name: string,
  controllers: CgroupController[],
): Promise<string | undefined> {
  const enable = controllers.map((c) => `+${c}`).join(' ')
  try {
    const enabled = (await readFile(path.join(dir, 'cgroup.subtree_control'), 'utf8')).split(/\s+/)
    if (!controllers.every((c) => enabled.includes(c))) {
      const procs = (await readFile(path.join(dir, 'cgroup.procs'), 'utf8')).trim()
      if (procs !== '') {
        await mkdir(path.join(dir, 'runner'), { recursive: true })
        await writeFile(path.join(dir, 'runner', 'cgroup.procs'), String(process.pid))
      }
      await writeFile(path.join(dir, 'cgroup.subtree_control'), enable)
    }
    await mkdir(path.join(dir, name), { recursive: true })
    await writeFile(path.join(dir, name, 'cgroup.subtree_control'), enable)
    return undefined
  } catch (error) {
    return `${(error as Error).message} (delegate a cgroup to the runner: systemd Delegate=yes, or a container with a writable cgroup namespace)`
  }
}

/** Runs `sh` that joins `files` and exits: proves a command could be placed there. */
export function tryJoin(files: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      '/bin/sh',
      ['-c', 'for f in "$@"; do echo $$ > "$f" || exit 1; done', 'sh', ...files],
      { timeout: 5000 },
      (error, _out, stderr) => resolve(error ? stderr.trim() || error.message : undefined),
    )
  })
}
