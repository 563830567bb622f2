import { realpath, rm } from 'node:fs/promises'
import type { EgressRules } from '../../src/contract/egress-rules.ts'
import { COMMAND_PATH, commandEnv } from './command-env.ts'
import type { CommandSandbox } from './command-sandbox.ts'
import { nodeEgressPolicy } from './egress-host.ts'
import { EgressProxy } from './egress-proxy.ts'
import { freshFolderOfThisProcess } from './process-tree.ts'
import { type CommandNetwork, RELAY_PORT, type RelayTools } from './sandbox-network.ts'
import { which } from './sandbox-probe.ts'

/** How commands that may use the network reach it, as the runner reports it. */
export type EgressStatus =
  | { mode: 'proxy' }
  | {
      mode: 'none'
      /** Why commands allowed the network get none (sandboxed) or the host's (unsandboxed). */
      reason: string
    }

/** The networks of the runner's commands. */
export interface CommandNetworks {
  readonly status: EgressStatus
  /** The network of one command allowed one; `close` ends it (call when the command settled). */
  open(
    owner: { tenant: string; sessionId: string; sandbox?: CommandSandbox },
    execSessionId: string,
  ): Promise<{ network: CommandNetwork; close(): Promise<void> }>
  close(): Promise<void>
}

/**
 * How long the start-up probe may take in all, and how long its client waits for the proxy's
 * answer once the request is sent (socat's `-t`). A working relay answers at once and the probe
 * ends then; the waits are long because a loaded machine (a busy CI runner, a cold start that
 * is still compiling) can keep the runner from answering for seconds, and a probe given up too
 * early leaves every command without network until the next start.
 */
const PROBE_TIMEOUT_MS = 60_000
const PROBE_ANSWER_WAIT_SECONDS = 45
const PROBE_REQUEST = 'GET http://0.0.0.0:1/ HTTP/1.0\r\nhost: probe\r\n\r\n'

/** Networks for no command: each one allowed the network gets none, with `reason`. */
export function withoutNetworks(reason: string): CommandNetworks {
  return {
    status: { mode: 'none', reason },
    open: async () => ({ network: { kind: 'unavailable', reason }, close: async () => {} }),
    close: async () => {},
  }
}

/** The relay's programs in the system folders every sandbox mounts, or why they are missing. */
function findRelayTools(): RelayTools | string {
  const dirs = COMMAND_PATH.split(':')
  const [socat, setpriv, sleep] = ['socat', 'setpriv', 'sleep'].map((name) => which(name, dirs))
  if (!socat) return 'socat is not installed (Debian/Ubuntu: apt-get install socat)'
  if (!setpriv) return 'setpriv (util-linux) is not installed'
  if (!sleep) return 'sleep (coreutils) is not installed'
  return { socat, setpriv, sleep }
}

/**
 * Starts the egress proxy of a sandboxed runner and proves the whole path once: a sandboxed
 * probe asks the relay for a refused address and must get the proxy's refusal. Without the
 * relay's programs, or when the probe fails, commands allowed the network get none — with a
 * note in their output saying why — never the host's network.
 */
export async function openCommandNetworks(options: {
  sandbox: CommandSandbox
  rules: EgressRules
  root: string
  log: (entry: Record<string, unknown>) => void
}): Promise<CommandNetworks> {
  const { sandbox, root, log } = options
  const status = sandbox.status
  if (status.isolation !== 'bwrap') {
    return withoutNetworks(
      `commands are not sandboxed (${status.reason}): they use this host's network, unchecked`,
    )
  }
  if (sandbox.settings.network === 'off') return withoutNetworks('TURNLINE_SANDBOX_NETWORK=off')
  const tools = findRelayTools()
  if (typeof tools === 'string') return withoutNetworks(tools)
  const asRoot = process.getuid?.() === 0
  const proxy = await EgressProxy.start({
    policy: nodeEgressPolicy(options.rules),
    ...(asRoot ? { owner: { uid: status.uid, gid: status.gid } } : {}),
    log,
  })
  const failure = await probe(sandbox, proxy, tools, root)
  if (failure) {
    await proxy.close()
    return withoutNetworks(`the network relay does not work here (${failure})`)
  }
  return {
    status: { mode: 'proxy' },
    open: async ({ tenant, sessionId, sandbox: tenants }, execSessionId) => {
      // The socket is the tenant's user's (each tenant may have a uid of its own).
      const egress = await proxy.open({ tenant, sessionId, execSessionId }, tenants?.fileOwner)
      return { network: { kind: 'proxy', socket: egress.socket, tools }, close: egress.close }
    },
    close: () => proxy.close(),
  }
}

/** Runs the relay in a real sandbox and asks for a refused address; a reason when it fails. */
async function probe(
  sandbox: CommandSandbox,
  proxy: EgressProxy,
  tools: RelayTools,
  root: string,
): Promise<string | undefined> {
  const workspace = await freshFolderOfThisProcess(root, '.egress-probe')
  const real = await realpath(workspace)
  await sandbox.prepareWorkspace(root, real)
  const egress = await proxy.open({ tenant: '-', sessionId: '-', execSessionId: 'probe' })
  try {
    const result = await sandbox.run(
      {
        argv: [
          tools.socat,
          '-t',
          String(PROBE_ANSWER_WAIT_SECONDS),
          // The request, then its side closed: the proxy still answers (and then closes).
          '-',
          `TCP:127.0.0.1:${RELAY_PORT}`,
        ],
        workspace: real,
        cwd: real,
        env: commandEnv({ workspace: real, cwd: real, tty: false, passEnv: [], source: {} }),
        network: { kind: 'proxy', socket: egress.socket, tools },
      },
      PROBE_TIMEOUT_MS,
      PROBE_REQUEST,
    )
    if (
      /^HTTP\/1\.1 403 /.test(result.stdout) &&
      /x-turnline-egress: refused/.test(result.stdout)
    ) {
      return undefined
    }
    const said = (result.stderr || result.stdout).trim().slice(0, 300)
    return result.timedOut ? `timed out: ${said}` : `exit ${result.code}: ${said || 'no output'}`
  } finally {
    await egress.close()
    await rm(workspace, { recursive: true, force: true })
  }
}
