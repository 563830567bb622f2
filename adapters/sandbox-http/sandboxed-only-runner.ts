import type {
  ExecStartRequest,
  RunnerRefusal,
  SandboxRunner,
  SandboxScope,
} from '../../src/ports/sandbox-runner.ts'
import type { RunnerSandbox } from './runner-sandbox-status.ts'

/**
 * Why a multi-tenant server refuses a runner's commands, for its operator (the start's refusal
 * or warning): the runner's address and what it said of its host; undefined when it reports
 * bubblewrap.
 */
export function unsandboxedRunnerText(url: string, found: RunnerSandbox): string | undefined {
  const sandbox = found.known ? found.sandbox : undefined
  if (sandbox?.isolation === 'bwrap') return undefined
  const why = sandbox ? `runs commands UNSANDBOXED (${sandbox.reason})` : notReported(found)
  return `the sandbox runner at ${url} ${why}${SEVERAL_TENANTS}`
}

/**
 * The same for a tenant, whose refused command carries it as its output: neither the runner's
 * address (the deployment's internal host and port) nor the runner's account of its host.
 */
export function refusedCommandText(found: RunnerSandbox): string | undefined {
  const sandbox = found.known ? found.sandbox : undefined
  if (sandbox?.isolation === 'bwrap') return undefined
  const why = sandbox ? 'runs commands UNSANDBOXED' : notReported(found)
  return `command refused: the sandbox runner ${why}${SEVERAL_TENANTS}`
}

const notReported = (found: RunnerSandbox) =>
  `did not report a sandbox (${found.known ? '' : found.why})`

const SEVERAL_TENANTS =
  ', and this server serves several tenants (TURNLINE_API_KEYS or a key registry): their ' +
  'commands run only in a sandbox. Start the runner with TURNLINE_SANDBOX=require on a host ' +
  'where bubblewrap works.'

/**
 * The remote runner of a multi-tenant server: before every command (and worktree, which runs
 * git) it asks the runner, in a signed exchange, how it isolates commands, and refuses unless it
 * answers bubblewrap — a runner restarted with other settings is caught before its next command.
 * Everything else goes straight through.
 */
export class SandboxedOnlyRunner implements SandboxRunner {
  readonly write: SandboxRunner['write']
  readonly poll: SandboxRunner['poll']
  readonly wait: SandboxRunner['wait']
  readonly close: SandboxRunner['close']
  readonly readSpool: SandboxRunner['readSpool']
  readonly readFile: SandboxRunner['readFile']
  readonly writeFile: SandboxRunner['writeFile']
  readonly applyPatch: SandboxRunner['applyPatch']
  readonly recentCommits: SandboxRunner['recentCommits']
  readonly eraseWorkspace: SandboxRunner['eraseWorkspace']

  constructor(
    private readonly inner: SandboxRunner,
    private readonly probe: () => Promise<RunnerSandbox>,
  ) {
    this.write = inner.write.bind(inner)
    this.poll = inner.poll.bind(inner)
    this.wait = inner.wait.bind(inner)
    this.close = inner.close.bind(inner)
    this.readSpool = inner.readSpool.bind(inner)
    this.readFile = inner.readFile.bind(inner)
    this.writeFile = inner.writeFile.bind(inner)
    this.applyPatch = inner.applyPatch.bind(inner)
    this.recentCommits = inner.recentCommits?.bind(inner)
    this.eraseWorkspace = inner.eraseWorkspace.bind(inner)
  }

  async start(scope: SandboxScope, request: ExecStartRequest) {
    const refusal = await this.#refusal()
    return refusal ? { ok: false as const, refusal } : this.inner.start(scope, request)
  }

  async createWorktree(scope: SandboxScope, request: { name: string; ref?: string }) {
    const refusal = await this.#refusal()
    return refusal ? { ok: false as const, refusal } : this.inner.createWorktree(scope, request)
  }

  async #refusal(): Promise<RunnerRefusal | undefined> {
    const message = refusedCommandText(await this.probe())
    return message === undefined
      ? undefined
      : { code: 'conflict', message, details: { setting: 'TURNLINE_SANDBOX' } }
  }
}
