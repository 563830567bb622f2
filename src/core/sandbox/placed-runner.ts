import type { SandboxPlacement } from '../../ports/sandbox-placement.ts'
import type {
  FileChange,
  RunnerResult,
  SandboxRunner,
  SandboxScope,
} from '../../ports/sandbox-runner.ts'

const PATCH_HEADER = /^(\*\*\* (?:Add File|Update File|Delete File|Move to): )(.+)$/gm

/**
 * A runner seen through a placement: every command runs, and every path resolves, inside
 * `baseDir` of the placement's workspace. A path that would leave `baseDir` is refused
 * (`path_escape`) before anything reaches the runner, so the worktree's isolation holds.
 */
export function placedRunner(inner: SandboxRunner, placement: SandboxPlacement): SandboxRunner {
  const scopeOf = (scope: SandboxScope): SandboxScope => ({
    tenant: scope.tenant,
    sessionId: placement.sessionId,
  })
  const base = placement.baseDir.replace(/\/+$/, '')
  /** Paths in answers are shown relative to the placement, as the model named them. */
  const relative = (path: string) =>
    path.startsWith(`${base}/`) ? path.slice(base.length + 1) : path
  const strip = (changes: FileChange[]) => changes.map((c) => ({ ...c, path: relative(c.path) }))
  const unplaced = <T extends { path: string }>(result: RunnerResult<T>): RunnerResult<T> =>
    result.ok ? { ok: true, value: { ...result.value, path: relative(result.value.path) } } : result
  return {
    start: (scope, request) => {
      const workdir = inside(base, request.workdir ?? '.')
      if (typeof workdir !== 'string') return Promise.resolve(workdir)
      return inner.start(scopeOf(scope), { ...request, workdir })
    },
    write: (scope, request) => inner.write(scopeOf(scope), request),
    poll: (scope, request) => inner.poll(scopeOf(scope), request),
    wait: (scope, request) => inner.wait(scopeOf(scope), request),
    close: (scope, id) => inner.close(scopeOf(scope), id),
    readSpool: (scope, request) => inner.readSpool(scopeOf(scope), request),
    readFile: (scope, request) => {
      const path = inside(base, request.path)
      if (typeof path !== 'string') return Promise.resolve(path)
      return inner.readFile(scopeOf(scope), { ...request, path }).then(unplaced)
    },
    writeFile: (scope, request) => {
      const path = inside(base, request.path)
      if (typeof path !== 'string') return Promise.resolve(path)
      return inner.writeFile(scopeOf(scope), { ...request, path }).then(unplaced)
    },
    applyPatch: async (scope, patch) => {
      let refusal: RunnerResult<never> | undefined
      const placed = patch.replace(PATCH_HEADER, (_line, head: string, path: string) => {
        const resolved = inside(base, path.trim())
        if (typeof resolved !== 'string') refusal ??= resolved
        return `${head}${typeof resolved === 'string' ? resolved : path}`
      })
      if (refusal) return refusal
      const result = await inner.applyPatch(scopeOf(scope), placed)
      return result.ok ? { ok: true, value: { changes: strip(result.value.changes) } } : result
    },
    createWorktree: (scope, request) => inner.createWorktree(scopeOf(scope), request),
    // The session's own workspace, never the one it is placed in (another session's).
    eraseWorkspace: (scope) => inner.eraseWorkspace(scope),
  }
}

/** `base/path` normalized, or a `path_escape` refusal when it would leave `base`. */
function inside(base: string, path: string): string | RunnerResult<never> {
  const refuse = (): RunnerResult<never> => ({
    ok: false,
    refusal: { code: 'path_escape', message: `${path} is outside this sandbox (${base})` },
  })
  if (path.startsWith('/') || path.includes('\0')) return refuse()
  const parts: string[] = []
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue
    if (part === '..') {
      if (parts.length === 0) return refuse()
      parts.pop()
    } else parts.push(part)
  }
  return parts.length ? `${base}/${parts.join('/')}` : base
}
