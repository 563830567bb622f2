import { TurnlineError } from '../contract/errors.ts'
import { reservedTenantName } from '../contract/tenancy.ts'

/**
 * Where a session lives: `<prefix>/<tenant>/<workspace>/.vtcode/sessions/<session_id>/`.
 * Every part is validated, never sanitized silently: a key built from user input must not be
 * able to reach outside its tenant's folder.
 */
export interface SessionRef {
  tenant: string
  workspace: string
  sessionId: string
}

/** Folder-name characters VT Code keeps when it sanitizes a session directory. */
const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/

export function assertSegment(kind: string, value: string): void {
  if (!SEGMENT.test(value) || value.includes('..')) {
    throw new TurnlineError(
      'invalid_input',
      `${kind} ${JSON.stringify(value.slice(0, 80))} is not valid: use 1–128 characters from ` +
        'A-Z a-z 0-9 . _ -, not starting with "." or "-", without "..".',
      { details: { field: kind } },
    )
  }
}

/**
 * A tenant's folder name: a valid segment that is not reserved for the deployment's own folders
 * (`reservedTenantName`), so no key built for a tenant reaches the runner's workspaces or the
 * store's own objects even if a tenant of such a name got past configuration.
 */
export function assertTenant(tenant: string): void {
  assertSegment('tenant', tenant)
  const reserved = reservedTenantName(tenant)
  if (reserved !== undefined) {
    throw new TurnlineError('invalid_input', reserved, { details: { field: 'tenant' } })
  }
}

export function validateRef(ref: SessionRef): SessionRef {
  assertTenant(ref.tenant)
  assertSegment('workspace', ref.workspace)
  assertSegment('session_id', ref.sessionId)
  return ref
}

const pad = (n: number) => String(n).padStart(10, '0')

/** Key builder for one session's objects. */
export class SessionKeys {
  readonly root: string
  /** The tenant's id pointer to this session (`sessionPointerKey`). */
  readonly pointer: string
  /** For messages (which name sessions, never storage keys). */
  readonly sessionId: string
  private readonly sessionsTail: string

  constructor(prefix: string, ref: SessionRef) {
    validateRef(ref)
    this.root = `${workspaceSessionsPrefix(prefix, ref.tenant, ref.workspace)}${ref.sessionId}/`
    this.pointer = sessionPointerKey(prefix, ref.tenant, ref.sessionId)
    this.sessionId = ref.sessionId
    this.sessionsTail = `.vtcode/sessions/${ref.sessionId}/`
  }

  batch(n: number): string {
    return `${this.root}log/${pad(n)}.json`
  }
  get logPrefix(): string {
    return `${this.root}log/`
  }
  checkpoint(n: number): string {
    return `${this.checkpointPrefix}${pad(n)}.json`
  }
  get checkpointPrefix(): string {
    return `${this.root}state/`
  }
  get manifest(): string {
    return `${this.root}manifest.json`
  }
  get events(): string {
    return `${this.root}events.jsonl`
  }
  /**
   * A create-only part of the rolled events, on a store that cannot append (store/event-parts.ts):
   * the canonical lines of seqs [first, end).
   */
  eventPart(first: number, end: number): string {
    return `${this.root}events/${pad(first)}-${pad(end)}.jsonl`
  }
  get turnIndex(): string {
    return `${this.root}index/turns.json`
  }
  /** Where pending intents are kept when the coordinator does not keep them (`intents/<n>`). */
  get intentsPrefix(): string {
    return `${this.root}intents/`
  }

  /**
   * An object of the session's workspace folder, by a relative path (compatibility exports):
   * plain segments only, never inside `.vtcode/sessions/` and never outside the workspace.
   */
  workspaceObject(path: string): string {
    const segments = path.split('/')
    const plain = segments.every(
      (s) => /^[A-Za-z0-9_.][A-Za-z0-9._-]*$/.test(s) && !/^\.+$/.test(s),
    )
    if (!plain || /^\.vtcode\/sessions(\/|$)/i.test(path)) {
      throw new TurnlineError(
        'invalid_input',
        `not a workspace object path: ${JSON.stringify(path.slice(0, 80))}`,
        {
          details: { field: 'path' },
        },
      )
    }
    return `${this.root.slice(0, -this.sessionsTail.length)}${path}`
  }

  /** Batch number of a `log/<n>.json` key, or undefined for anything else. */
  batchNumber(key: string): number | undefined {
    if (!key.startsWith(this.logPrefix)) return undefined
    const match = /^(\d{10})\.json$/.exec(key.slice(this.logPrefix.length))
    return match ? Number(match[1]) : undefined
  }
}

/** `<prefix>/<tenant>/<workspace>/.vtcode/sessions/` (prefix may be empty). */
export function workspaceSessionsPrefix(prefix: string, tenant: string, workspace: string): string {
  assertTenant(tenant)
  assertSegment('workspace', workspace)
  const head = prefix.replace(/^\/+|\/+$/g, '')
  return `${head ? `${head}/` : ''}${tenant}/${workspace}/.vtcode/sessions/`
}

/** `<prefix>/<tenant>/`: the tenant's folder, one folder per workspace (and `.turnline/`). */
export function tenantPrefix(prefix: string, tenant: string): string {
  assertTenant(tenant)
  const head = prefix.replace(/^\/+|\/+$/g, '')
  return `${head ? `${head}/` : ''}${tenant}/`
}

/** `<prefix>/<tenant>/.turnline/sessions/<session_id>.json`: the id → workspace pointer. */
export function sessionPointerKey(prefix: string, tenant: string, sessionId: string): string {
  assertTenant(tenant)
  assertSegment('session_id', sessionId)
  const head = prefix.replace(/^\/+|\/+$/g, '')
  return `${head ? `${head}/` : ''}${tenant}/.turnline/sessions/${sessionId}.json`
}
