import { chmod, chown, mkdtemp, rm } from 'node:fs/promises'
import type { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { formatIp } from '../../src/shared/ip-address.ts'
import type { EgressPolicy } from '../shared/egress-policy.ts'
import { type EgressCheck, forward, tunnel } from './egress-forwarding.ts'
import { nodeHttp } from './node-http.ts'
import { leftByGoneProcesses } from './process-tree.ts'

/** Whose command a proxy socket serves: logged with every destination it asks for. */
export interface EgressIdentity {
  tenant: string
  sessionId: string
  execSessionId: string
}

/** One command's proxy: the socket to bind into its sandbox, and its end. */
export interface CommandEgress {
  socket: string
  /** Stops accepting, cuts the command's open connections, removes the socket. */
  close(): Promise<void>
}

/** The proxy's folder in the temp directory: `turnline-proxy-<runner pid>-<random>`. */
const FOLDER_PREFIX = 'turnline-proxy-'

/** Connections one command may hold open through the proxy at once. */
const MAX_CONNECTIONS = 256

/**
 * The runner's forward proxy for commands (docs/runner-protocol.md, "Network"): one unix socket
 * per command (so each request is known to be that tenant's, that session's, that command's),
 * in a folder of its own under the temp directory (short paths: a socket path has at most 107
 * bytes), named after the runner's pid so the next runner removes what a killed one left. Every destination goes through the egress policy; the decision is logged.
 */
export class EgressProxy {
  readonly #servers = new Set<() => Promise<void>>()

  private constructor(
    private readonly dir: string,
    private readonly policy: EgressPolicy,
    private readonly owner: { uid: number; gid: number } | undefined,
    private readonly log: (entry: Record<string, unknown>) => void,
  ) {}

  /** `owner`: the sandbox user, when the runner runs as root (the socket becomes theirs). */
  static async start(options: {
    policy: EgressPolicy
    owner?: { uid: number; gid: number }
    log: (entry: Record<string, unknown>) => void
  }): Promise<EgressProxy> {
    await removeStaleFolders()
    const dir = await mkdtemp(path.join(tmpdir(), `${FOLDER_PREFIX}${process.pid}-`))
    // Traversable, not listable: bubblewrap (as the sandbox user) must reach the socket to bind it.
    await chmod(dir, 0o711)
    return new EgressProxy(dir, options.policy, options.owner, options.log)
  }

  /** `owner`: whom the socket is for, when not the proxy's `owner` (a tenant's own uid). */
  async open(identity: EgressIdentity, owner = this.owner): Promise<CommandEgress> {
    const socket = path.join(this.dir, `${identity.execSessionId}.sock`)
    const check: EgressCheck = async (method, host, port) => {
      const decision = await this.policy.check(host, port)
      this.log({
        event: decision.ok ? 'egress_allowed' : 'egress_refused',
        tenant: identity.tenant,
        session_id: identity.sessionId,
        exec_session_id: identity.execSessionId,
        method,
        host,
        port,
        ...(decision.ok
          ? { addresses: decision.addresses.map(formatIp), via: decision.via }
          : { reason: decision.reason }),
      })
      return decision
    }
    const server = nodeHttp.createServer()
    // A client that closes its side once it sent its request (HTTP/1.0 tools, `printf … | socat`)
    // still gets the answer: without this Node ends the socket at the client's FIN, and an answer
    // that waited for the check (a name lookup) was lost. (`httpAllowHalfOpen` is Node's own
    // switch for this on http.Server; it is not in its type definitions.)
    ;(server as { httpAllowHalfOpen?: boolean }).httpAllowHalfOpen = true
    const clients = new Set<Socket>()
    server.maxConnections = MAX_CONNECTIONS
    // Downloads and uploads may take long; the sandbox's own time limit bounds them.
    server.requestTimeout = 0
    server.on('connection', (client: Socket) => {
      clients.add(client)
      client.once('close', () => clients.delete(client))
    })
    server.on('request', (req, res) => void forward(req, res, check))
    server.on('connect', (req, client, head) => void tunnel(req, client, head, check))
    server.on('upgrade', (_req, client) => client.destroy())
    server.on('clientError', (_error, client) => client.destroy())
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(socket, () => resolve())
    })
    if (owner) await chown(socket, owner.uid, owner.gid)
    await chmod(socket, 0o600)
    let closing: Promise<void> | undefined
    const close = () => {
      closing ??= (async () => {
        this.#servers.delete(close)
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()))
        for (const client of clients) client.destroy()
        await stopped
        await rm(socket, { force: true })
      })()
      return closing
    }
    this.#servers.add(close)
    return { socket, close }
  }

  /** Ends every command's proxy and removes the folder. */
  async close(): Promise<void> {
    await Promise.all([...this.#servers].map((close) => close()))
    await rm(this.dir, { recursive: true, force: true })
  }
}

/** Folders left by runners that were killed (SIGKILL closes nothing): their sockets are dead. */
async function removeStaleFolders(): Promise<void> {
  const pattern = new RegExp(`^${FOLDER_PREFIX}(\\d+)-`)
  for (const name of await leftByGoneProcesses(tmpdir(), pattern)) {
    await rm(path.join(tmpdir(), name), { recursive: true, force: true }).catch(() => {})
  }
}
