import { mkdir, realpath } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type * as z from 'zod'
import {
  SandboxStatusBodySchema,
  WorkspaceEraseBodySchema,
} from '../../src/contract/runner-requests.ts'
import {
  ID_HEADER,
  MemoryReplayGuard,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  verifyRunnerMessage,
} from '../../src/contract/runner-signature.ts'
import type { EgressStatus } from './command-networks.ts'
import type { SandboxStatus } from './command-sandbox.ts'
import { openConfinement } from './confinement-probes.ts'
import { ExecRegistry, type ExitListener } from './exec-registry.ts'
import { ExitCallbacks, exitNotice } from './exit-callback.ts'
import { closeInheritedDescriptors } from './inherited-descriptors.ts'
import { nodeHttp } from './node-http.ts'
import { PrivateSpoolIndex } from './private-spool-index.ts'
import { PrivateSpoolSweep } from './private-spool-sweep.ts'
import { projectSandboxSettings } from './project-mode.ts'
import { REFUSAL_STATUS, Refusal } from './refusal.ts'
import { runnerStderrLog } from './runner-log.ts'
import { runnerRoutes } from './runner-routes.ts'
import { SignedAnswer, sandboxReport } from './sandbox-report.ts'
import { DEFAULT_SANDBOX_SETTINGS, type SandboxSettings } from './sandbox-settings.ts'
import type { TenantLimitStatus } from './tenant-limit-enforcer.ts'
import { WorkspaceEraser } from './workspace-eraser.ts'
import { checkWorkspaceName } from './workspace-paths.ts'
import { WorkspaceRoot } from './workspace-root.ts'

export interface RunnerOptions {
  /** Folder holding one workspace per session: `<root>/<tenant>/<session_id>/`. */
  root: string
  /** HMAC secret shared with the client (and used to sign exit callbacks). */
  secret: string
  /** Where exit notices are POSTed (e.g. `<api>/v1/runner/callback`); none when absent. */
  callbackUrl?: string
  /** 0 (default) picks a free port. */
  port?: number
  /** Default 127.0.0.1. */
  host?: string
  /** Structured log sink; default one JSON line per entry on stderr. */
  log?: (entry: Record<string, unknown>) => void
  callbackAttempts?: number
  callbackBackoffMs?: number
  /** How commands are isolated (default: bubblewrap where it works, see sandbox-settings.ts). */
  sandbox?: SandboxSettings
  /**
   * Project mode: this existing folder is every session's workspace, the one writable path of
   * its commands (project-mode.ts); the runner's own state stays under `root`.
   */
  project?: string
  /** Tenants set up once it listens, off its start's path (TenantLimitEnforcer.prepare). */
  prepareTenants?: string[]
}

export interface RunningRunner {
  url: string
  /** What the start-up probe found: bubblewrap, or unsandboxed and why. */
  sandbox: SandboxStatus
  /** How each tenant is held to its limits here, and what cannot be enforced. */
  tenantLimits: TenantLimitStatus
  /** How commands allowed the network reach it, once its probe ended (probed-networks.ts). */
  egress: Promise<EgressStatus>
  /** Stops accepting requests, ends every running command, stops callback retries. */
  close(): Promise<void>
}

const MAX_BODY_BYTES = 2 * 1024 * 1024
/** Routes with no workspace opened: erasing one (workspace-eraser.ts), the sandbox report. */
const STATUS_ROUTE = '/v1/sandbox/status'
const OWN_ROUTES = new Map<string, { schema: z.ZodType }>([
  ['/v1/workspace/erase', { schema: WorkspaceEraseBodySchema }],
  [STATUS_ROUTE, { schema: SandboxStatusBodySchema }],
])

class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message)
  }
}

/** The reference sandbox runner (protocol: docs/runner-protocol.md), in this process. */
export async function startRunner(options: RunnerOptions): Promise<RunningRunner> {
  if (options.secret.length < 16)
    throw new Error('the runner secret must be at least 16 characters')
  const log = options.log ?? runnerStderrLog
  // Before any command starts: a descriptor this process inherited would reach every one.
  const closed = closeInheritedDescriptors()
  if (closed.length > 0) log({ event: 'inherited_descriptors_closed', fds: closed })
  await mkdir(options.root, { recursive: true })
  const root = await realpath(options.root)
  const project = options.project === undefined ? undefined : await realpath(options.project)
  const settings = project
    ? await projectSandboxSettings(
        options.sandbox ?? DEFAULT_SANDBOX_SETTINGS,
        project,
        process.getuid?.() ?? -1,
      )
    : (options.sandbox ?? DEFAULT_SANDBOX_SETTINGS)
  // Walked for the private spools there are once it listens (PrivateSpoolSweep's first pass).
  const spools = new PrivateSpoolIndex(root)
  const { sandbox, limits, networks } = await openConfinement({
    root,
    settings,
    project: project !== undefined,
    spools,
    log,
  })
  const workspaces = WorkspaceRoot.open(root, project)
  const callbacks = options.callbackUrl
    ? new ExitCallbacks({
        url: options.callbackUrl,
        secret: options.secret,
        log,
        ...(options.callbackAttempts ? { attempts: options.callbackAttempts } : {}),
        ...(options.callbackBackoffMs ? { backoffMs: options.callbackBackoffMs } : {}),
      })
    : undefined
  const onExit: ExitListener = (scope, session) => {
    const code = session.exitCode
    if (callbacks && code !== undefined) void callbacks.send(exitNotice(scope, session, code))
  }
  const registry = new ExecRegistry(root, workspaces, limits, networks, onExit, spools)
  const routes = runnerRoutes(registry, limits)
  const eraser = new WorkspaceEraser(workspaces, registry, (tenant) => limits.remeasure(tenant))
  const replay = new MemoryReplayGuard()

  const handle = async (req: IncomingMessage): Promise<unknown> => {
    const pathname = new URL(req.url ?? '/', 'http://runner').pathname
    if (pathname === '/healthz' && req.method === 'GET') {
      return { ok: true, sandbox: sandbox.status.isolation }
    }
    const route = routes.get(pathname)
    const target = OWN_ROUTES.get(pathname) ?? route
    if (!target) throw new HttpFailure(404, 'not_found', `no route ${pathname}`)
    if (req.method !== 'POST') throw new HttpFailure(405, 'method_not_allowed', 'use POST')
    const raw = await readBody(req)
    const check = await verifyRunnerMessage({
      secret: options.secret,
      body: raw,
      id: header(req, ID_HEADER),
      timestamp: header(req, TIMESTAMP_HEADER),
      signature: header(req, SIGNATURE_HEADER),
      nowMs: Date.now(),
      replay,
    })
    if (!check.ok) {
      throw new HttpFailure(401, 'unauthorized', `request rejected: ${check.message}`, {
        reason: check.reason,
      })
    }
    let json: unknown
    try {
      json = JSON.parse(raw.toString('utf8'))
    } catch {
      throw new HttpFailure(400, 'invalid_input', 'body is not JSON')
    }
    const parsed = target.schema.safeParse(json)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      throw new HttpFailure(
        400,
        'invalid_input',
        `invalid body: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'rejected'}`,
      )
    }
    const { nonce } = parsed.data as { nonce: string }
    if (pathname === STATUS_ROUTE) return sandboxReport(sandbox.status, options.secret, nonce)
    const body = parsed.data as { tenant: string; session_id: string }
    // Names first: a tenant's uid and cgroups are named after it.
    checkWorkspaceName(body.tenant)
    // Erasing reaches the workspace its own way (workspace-eraser.ts), never making it.
    if (!route) return eraser.erase(body.tenant, body.session_id)
    const tenantSandbox = await limits.sandboxFor(body.tenant)
    const workspace = workspaces.open(body.tenant, body.session_id, tenantSandbox.fileOwner)
    try {
      return await route.handle(
        { tenant: body.tenant, sessionId: body.session_id, workspace, sandbox: tenantSandbox },
        body,
        Date.now(),
      )
    } finally {
      workspace.close()
    }
  }

  const server = nodeHttp.createServer((req, res) => {
    handle(req).then(
      (body) => send(res, 200, body),
      (error: unknown) => {
        if (error instanceof Refusal) {
          send(res, REFUSAL_STATUS[error.code], errorBody(error.code, error.message, error.details))
        } else if (error instanceof HttpFailure) {
          send(res, error.status, errorBody(error.code, error.message, error.details))
        } else {
          log({
            event: 'runner_error',
            level: 'error',
            url: req.url,
            error: String((error as Error)?.stack ?? error),
          })
          send(res, 500, errorBody('internal', 'the runner failed to handle the request'))
        }
      },
    )
  })
  server.requestTimeout = 0
  server.headersTimeout = 30_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve())
  }).catch(async (error: unknown) => {
    await networks.close()
    await limits.close()
    throw error
  })
  const graceMs = settings.privateSpoolGraceSeconds * 1000
  const { writing, swept: removed } = registry
  const sweep = new PrivateSpoolSweep({ root, index: spools, graceMs, writing, removed, log })
  sweep.start()
  // Off the start's path: the tenants asked for, and the body schemas (built at their first use).
  const preparing = limits.prepare(options.prepareTenants ?? [], log)
  setImmediate(() => {
    for (const route of [...OWN_ROUTES.values(), ...routes.values()]) route.schema.safeParse({})
  })
  const address = server.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  let closing: Promise<void> | undefined
  return {
    url: `http://${host}:${address.port}`,
    sandbox: sandbox.status,
    tenantLimits: limits.status,
    egress: networks.status,
    close: () => {
      closing ??= (async () => {
        callbacks?.cancelAll()
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()))
        await preparing
        await sweep.stop()
        await registry.closeAll()
        await limits.close()
        await networks.close()
        server.closeAllConnections()
        await stopped
        workspaces.close()
      })()
      return closing
    },
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  return [req.headers[name]].flat()[0]
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.byteLength
      if (size > MAX_BODY_BYTES) {
        // Keep draining (and discarding) so the 413 can still be answered.
        chunks.length = 0
        reject(new HttpFailure(413, 'payload_too_large', `body exceeds ${MAX_BODY_BYTES} bytes`))
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

function errorBody(code: string, message: string, details?: Record<string, unknown>) {
  return { error: { code, message, ...(details ? { details } : {}) } }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return
  const text = body instanceof SignedAnswer ? body.text : JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...(body instanceof SignedAnswer ? body.headers : {}),
  })
  res.end(text)
}
