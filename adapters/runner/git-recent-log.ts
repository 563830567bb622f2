import { setImmediate } from 'node:timers/promises'
import type { GitLogResult } from '../../src/contract/runner-answers.ts'
import { EventLoopPacer } from '../../src/shared/event-loop-pacer.ts'
import type { CommandSandbox } from './command-sandbox.ts'
import { GitObjects, gitEntry, gitFile } from './git-objects.ts'
import { GitUnreadable } from './git-unreadable.ts'
import { OneAtATime } from './one-at-a-time.ts'
import type { WorkspaceDir } from './workspace-walk.ts'

/**
 * What `git rev-parse --is-inside-work-tree && git log --oneline -<count> --no-decorate` prints in
 * a workspace, read from its `.git` by the runner without starting a process (the orient phase
 * of every new session asks for it; a sandbox launch costs 100+ ms).
 *
 * - 'none': git would print nothing: the workspace has no `.git` and a sandboxed command sees no
 *   folder above it (so git finds no repository), or the branch has no commit yet.
 * - 'log': the lines git prints: commits newest first by committer date (git's default walk:
 *   a queue ordered by date, ties in the order met), each as its shortest unique abbreviation of
 *   at least the length git picks for the repository's size, and its subject.
 * - 'unknown': only git can tell — the caller runs the command in the sandbox. Chosen whenever
 *   something could make git print otherwise: a `.git` file or symlink, a symlink anywhere on a
 *   path read, config that changes the output or the object format (extensions, includes,
 *   core.abbrev, log encoding, replace refs, grafts, shallow or alternate object stores),
 *   GIT_* variables passed to commands, an unsandboxed runner or a read-only mount above the
 *   workspace (git could find a repository there), a deltified or unknown object.
 *
 * Every file is read through the runner's descriptor walk, never following a symlink: the
 * repository is the tenant's, and nothing in it can make the runner read outside the workspace.
 */

const MAX_CONFIG_BYTES = 1024 * 1024
const MAX_REF_BYTES = 64 * 1024
const MAX_PACKED_REFS_BYTES = 16 * 1024 * 1024
const SHA = /^[0-9a-f]{40}$/
const REF = /^refs\/[A-Za-z0-9._/-]{1,200}$/
/** Config that changes what `git log --oneline` prints or how objects are found. */
const OUTPUT_CONFIG =
  /\[\s*(extensions|include|includeif)\b|abbrev|logoutputencoding|replacerefs|worktree|bare\s*=\s*true|grafts/i
/** Files whose presence means git would read the objects or history otherwise. */
const OTHER_HISTORY = [
  '.git/shallow',
  '.git/info/grafts',
  '.git/objects/info/alternates',
  '.git/commondir',
  '.git/refs/replace',
]
/** What the sandbox's git reads as config besides `.git/config`: HOME is the workspace. */
const USER_CONFIG = ['.gitconfig', '.config/git/config']

/**
 * How long a reading runs on the runner's one thread before it lets other requests in (a
 * reading of a real repository takes about that; a pause costs one turn of the event loop).
 */
const SLICE_MS = 10
/**
 * How long a reading may run in all (its slices): a real repository's takes some 10 ms; past
 * this the reading is 'unknown' (git, in the sandbox, answers) rather than keep the next reading
 * waiting.
 */
const MAX_RUN_MS = 500
/**
 * One reading at a time: each may hold up to its bound on bytes (git-read-budget.ts). Taken in
 * turn by tenant, so one tenant's many readings do not make another tenant's wait for all.
 */
const readings = new OneAtATime()

export function recentLog(
  tenant: string,
  ws: WorkspaceDir,
  sandbox: CommandSandbox,
  count: number,
): Promise<GitLogResult> {
  return readings.run(tenant, async () => {
    try {
      return await readLog(
        ws,
        sandbox,
        count,
        new EventLoopPacer({ sliceMs: SLICE_MS, maxRunMs: MAX_RUN_MS, nextTurn: setImmediate }),
      )
    } catch (error) {
      return { state: 'unknown', reason: error instanceof Error ? error.message : String(error) }
    }
  })
}

const unknown = (reason: string): GitLogResult => ({ state: 'unknown', reason })

async function readLog(
  ws: WorkspaceDir,
  sandbox: CommandSandbox,
  count: number,
  slices: EventLoopPacer,
): Promise<GitLogResult> {
  if (sandbox.settings.passEnv.some((name) => name.startsWith('GIT_'))) {
    return unknown('commands get GIT_* variables')
  }
  const dotGit = gitEntry(ws, '.git')
  if (!dotGit) {
    return sandbox.seesAbove(ws.path)
      ? unknown('a command sees folders above the workspace')
      : { state: 'none' }
  }
  if (!dotGit.isDirectory()) return unknown('.git is not a folder')
  for (const rel of ['.git/config', ...USER_CONFIG]) {
    const config = gitFile(ws, rel, MAX_CONFIG_BYTES)?.toString('utf8') ?? ''
    if (OUTPUT_CONFIG.test(config))
      return unknown(`${rel} has settings this reader does not follow`)
  }
  for (const rel of OTHER_HISTORY) {
    if (gitEntry(ws, rel)) return unknown(`${rel} exists`)
  }
  const head = resolveHead(ws)
  if (head === undefined) return { state: 'none' }
  const objects = await GitObjects.open(ws, slices)
  const lines: string[] = []
  for (const { sha, subject } of await walk(objects, head, count)) {
    lines.push(`${await abbreviation(objects, sha)} ${subject}`)
  }
  return { state: 'log', log: lines.join('\n') }
}

/** The commit HEAD names, or undefined on an unborn branch. */
function resolveHead(ws: WorkspaceDir): string | undefined {
  const headFile = gitFile(ws, '.git/HEAD', MAX_REF_BYTES)
  if (headFile === undefined) throw new GitUnreadable('.git has no HEAD')
  let text: string = headFile.toString('utf8').trim()
  let packed: Map<string, string> | undefined
  for (let depth = 0; depth < 5; depth++) {
    if (SHA.test(text)) return text
    const ref: string | undefined = /^ref: (\S+)$/.exec(text)?.[1]
    if (!ref || !REF.test(ref) || ref.split('/').includes('..')) {
      throw new GitUnreadable(`HEAD names ${JSON.stringify(text.slice(0, 100))}`)
    }
    const loose: string | undefined = gitFile(ws, `.git/${ref}`, MAX_REF_BYTES)
      ?.toString('utf8')
      .trim()
    if (loose !== undefined) {
      text = loose
      continue
    }
    packed ??= packedRefs(ws)
    return packed.get(ref)
  }
  throw new GitUnreadable('HEAD goes through too many symbolic refs')
}

function packedRefs(ws: WorkspaceDir): Map<string, string> {
  const text = gitFile(ws, '.git/packed-refs', MAX_PACKED_REFS_BYTES)?.toString('utf8') ?? ''
  const refs = new Map<string, string>()
  for (const line of text.split('\n')) {
    const match = /^([0-9a-f]{40}) (\S+)$/.exec(line)
    if (match?.[2]) refs.set(match[2], match[1] as string)
  }
  return refs
}

interface Commit {
  sha: string
  time: number
  parents: string[]
  subject: string
}

function parseCommit(sha: string, body: string): Commit {
  const end = body.indexOf('\n\n')
  const headers = (end < 0 ? body : body.slice(0, end)).split('\n')
  const message = end < 0 ? '' : body.slice(end + 2)
  const parents: string[] = []
  let time = 0
  for (const line of headers) {
    if (line.startsWith('parent ')) parents.push(line.slice(7))
    else if (line.startsWith('committer ')) time = Number(/> (\d+) [+-]\d{4}$/.exec(line)?.[1] ?? 0)
    else if (line.startsWith('encoding ') && !/^encoding utf-?8$/i.test(line)) {
      throw new GitUnreadable(`${sha} is in ${line.slice(9)}`)
    }
  }
  return { sha, time, parents, subject: subjectOf(message) }
}

/** git's title line: the first paragraph (after blank lines) with its lines joined by spaces. */
function subjectOf(message: string): string {
  const lines = message.split('\n')
  let i = 0
  while (i < lines.length && (lines[i] ?? '').trim() === '') i++
  const title: string[] = []
  for (; i < lines.length; i++) {
    const line = (lines[i] ?? '').replace(/\s+$/, '')
    if (line === '') break
    title.push(line)
  }
  return title.join(' ')
}

/** git's default walk from `head`: the newest by committer date first, ties in the order met. */
async function walk(objects: GitObjects, head: string, count: number): Promise<Commit[]> {
  const seen = new Set([head])
  const queue: Commit[] = [parseCommit(head, await objects.commit(head))]
  const shown: Commit[] = []
  while (queue.length > 0 && shown.length < count) {
    let best = 0
    for (let i = 1; i < queue.length; i++) {
      if ((queue[i] as Commit).time > (queue[best] as Commit).time) best = i
    }
    const commit = queue.splice(best, 1)[0] as Commit
    shown.push(commit)
    for (const parent of commit.parents) {
      if (seen.has(parent)) continue
      seen.add(parent)
      queue.push(parseCommit(parent, await objects.commit(parent)))
    }
  }
  return shown
}

/** git's automatic abbreviation: from the packed object count, then longer until unique. */
async function abbreviation(objects: GitObjects, sha: string): Promise<string> {
  const count = objects.packedCount
  const bits = count > 0 ? Math.floor(Math.log2(count)) + 1 : 1
  let length = Math.max(7, Math.ceil(bits / 2))
  while (length < 40 && (await objects.ambiguous(sha, length))) length++
  return sha.slice(0, length)
}
