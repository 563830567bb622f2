import * as z from 'zod'
import {
  EgressEnvShape,
  type EgressRules,
  egressRulesFrom,
  NO_EGRESS_RULES,
} from '../../src/contract/egress-rules.ts'
import { envList, envInteger as integer } from '../../src/contract/env-values.ts'
import { lazySchema } from '../../src/contract/lazy-schema.ts'

/**
 * How the reference runner isolates commands (docs/configuration.md, "Command sandbox"). The
 * same environment variables configure the standalone runner (`adapters/runner/main.ts`) and the
 * runner `npm start` embeds; this file only parses them (no `node:*`, so the Worker bundle that
 * validates the whole environment can include it).
 */

/** `auto`: bubblewrap when it works, else unsandboxed (loudly); `require`: refuse to start
 * without it; `off`: unsandboxed on purpose (a trusted single user). */
export type SandboxMode = 'auto' | 'require' | 'off'
/**
 * `session`: a command has a network only when its session allows it; `on`: always; `off`:
 * never. A network is the egress proxy's (the public internet), never the host's.
 */
export type NetworkPolicy = 'off' | 'session' | 'on'

export interface SandboxLimits {
  /** Address space of each process (RLIMIT_AS), MiB. */
  memoryMb: number
  /** CPU time of each process (RLIMIT_CPU), seconds: SIGXCPU, then SIGKILL a second later. */
  cpuSeconds: number
  /** Wall-clock time of a command; the runner then ends its whole sandbox. */
  timeLimitSeconds: number
  /** Processes of the sandbox user inside one sandbox (RLIMIT_NPROC; sandboxed only). */
  maxProcesses: number
  /** Largest file a command may write (RLIMIT_FSIZE), MiB. */
  fileSizeMb: number
  /** Output the runner records of one command (its spool), MiB: then it stops and ends it. */
  spoolMb: number
}

/** What one tenant may hold on the host, all its sessions and commands together. */
export interface TenantLimits {
  /** Commands running at once; the next start is refused (409). */
  commands: number
  /** Processes (cgroup `pids.max`, and RLIMIT_NPROC of the tenant's own uid). */
  processes: number
  /** Memory of its commands together (cgroup `memory.max`), MiB. */
  memoryMb: number
  /** Disk space of its workspaces together, MiB, measured (docs/configuration.md). */
  diskMb: number
  /** Seconds between measurements of its disk use while a command of it runs. */
  diskCheckSeconds: number
  /** Longest walk of one measurement, ms; a second walk in a row this slow counts as over. */
  diskWalkTimeoutMs: number
}

/** The uids (and equal gids) given to tenants, one each, when the runner runs as root. */
export interface UidRange {
  first: number
  last: number
}

/** `auto`: cgroup v2 (delegated) or v1 controllers where the runner may write them; `off`. */
export type CgroupMode = 'auto' | 'off'

export interface SandboxSettings {
  mode: SandboxMode
  network: NetworkPolicy
  /** The unprivileged user commands run as when the runner runs as root. */
  uid: number
  gid: number
  limits: SandboxLimits
  tenant: TenantLimits
  /** Each tenant's commands run as a uid of its own from this range; null: all as `uid`. */
  tenantUids: UidRange | null
  cgroups: CgroupMode
  /** Names of runner environment variables passed on to commands (the allow-list's extension). */
  passEnv: string[]
  /** Host folders or files mounted read-only into every sandbox, besides the system folders. */
  readOnlyPaths: string[]
  /** How long a private spool is kept once its command ended, unclosed (private-spool-sweep.ts). */
  privateSpoolGraceSeconds: number
  /** What commands with the network may reach through the egress proxy (TURNLINE_EGRESS_*). */
  egress: EgressRules
}

export const DEFAULT_SANDBOX_SETTINGS: SandboxSettings = {
  mode: 'auto',
  network: 'session',
  uid: 65534,
  gid: 65534,
  limits: {
    memoryMb: 4096,
    cpuSeconds: 600,
    timeLimitSeconds: 3600,
    maxProcesses: 512,
    fileSizeMb: 4096,
    spoolMb: 1024,
  },
  tenant: {
    commands: 32,
    processes: 2048,
    memoryMb: 8192,
    diskMb: 10_240,
    diskCheckSeconds: 10,
    diskWalkTimeoutMs: 60_000,
  },
  tenantUids: { first: 1_000_000_000, last: 1_000_999_999 },
  cgroups: 'auto',
  passEnv: [],
  readOnlyPaths: [],
  // A hook's longest timeout (600 s), then a margin.
  privateSpoolGraceSeconds: 900,
  egress: NO_EGRESS_RULES,
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
const names = envList.pipe(
  z.array(
    z
      .string()
      .regex(ENV_NAME, 'must list variable names (A-Z a-z 0-9 _)')
      .refine((name) => !name.toUpperCase().startsWith('TURNLINE_'), {
        message: 'TURNLINE_* variables hold the server’s own secrets and never reach commands',
      }),
  ),
)
const paths = envList.pipe(
  z.array(
    z
      .string()
      .regex(/^\/[^,:\0]*$/, 'must list absolute paths')
      .refine((p) => !p.split('/').includes('..'), 'must not contain ".."'),
  ),
)

const uidRange = z
  .string()
  .trim()
  .transform((v, ctx): UidRange | null => {
    if (v === 'off') return null
    const match = /^(\d+)-(\d+)$/.exec(v)
    const first = Number(match?.[1])
    const last = Number(match?.[2])
    if (!match || first < 1000 || last > 4_294_967_294 || last < first) {
      ctx.addIssue({
        code: 'custom',
        message: 'must be `off` or FIRST-LAST (uids from 1000 to 4294967294, FIRST ≤ LAST)',
      })
      return z.NEVER
    }
    return { first, last }
  })

/** The variables, as strings; empty counts as unset (the caller drops empty values). */
export const SandboxEnvShape = {
  TURNLINE_SANDBOX: z.enum(['auto', 'require', 'off']).optional(),
  TURNLINE_SANDBOX_NETWORK: z.enum(['off', 'session', 'on']).optional(),
  TURNLINE_SANDBOX_UID: integer(1, 4_294_967_294).optional(),
  TURNLINE_SANDBOX_GID: integer(1, 4_294_967_294).optional(),
  TURNLINE_SANDBOX_MEMORY_MB: integer(64, 1_048_576).optional(),
  TURNLINE_SANDBOX_CPU_SECONDS: integer(1, 604_800).optional(),
  TURNLINE_SANDBOX_TIME_LIMIT_SECONDS: integer(1, 604_800).optional(),
  TURNLINE_SANDBOX_MAX_PROCESSES: integer(8, 1_000_000).optional(),
  TURNLINE_SANDBOX_FILE_SIZE_MB: integer(1, 16_777_216).optional(),
  TURNLINE_SANDBOX_SPOOL_MB: integer(1, 16_777_216).optional(),
  TURNLINE_SANDBOX_TENANT_COMMANDS: integer(1, 100_000).optional(),
  TURNLINE_SANDBOX_TENANT_PROCESSES: integer(8, 4_194_304).optional(),
  TURNLINE_SANDBOX_TENANT_MEMORY_MB: integer(64, 16_777_216).optional(),
  TURNLINE_SANDBOX_TENANT_DISK_MB: integer(1, 1_073_741_824).optional(),
  TURNLINE_SANDBOX_DISK_CHECK_SECONDS: integer(1, 86_400).optional(),
  TURNLINE_SANDBOX_DISK_WALK_TIMEOUT_MS: integer(10, 3_600_000).optional(),
  TURNLINE_SANDBOX_TENANT_UIDS: uidRange.optional(),
  TURNLINE_SANDBOX_CGROUPS: z.enum(['auto', 'off']).optional(),
  TURNLINE_SANDBOX_ENV: names.optional(),
  TURNLINE_SANDBOX_READ_ONLY: paths.optional(),
  TURNLINE_SANDBOX_PRIVATE_SPOOL_GRACE_SECONDS: integer(1, 604_800).optional(),
  /** The egress rules: the runner's proxy applies them (src/contract/egress-rules.ts). */
  ...EgressEnvShape,
}

export const SandboxEnvSchema = lazySchema(() => z.object(SandboxEnvShape))
export type SandboxEnv = z.output<typeof SandboxEnvSchema>

/** Settings from parsed variables, defaults for the rest. */
export function sandboxSettingsFrom(env: SandboxEnv): SandboxSettings {
  const d = DEFAULT_SANDBOX_SETTINGS
  return {
    mode: env.TURNLINE_SANDBOX ?? d.mode,
    network: env.TURNLINE_SANDBOX_NETWORK ?? d.network,
    uid: env.TURNLINE_SANDBOX_UID ?? d.uid,
    gid: env.TURNLINE_SANDBOX_GID ?? d.gid,
    limits: {
      memoryMb: env.TURNLINE_SANDBOX_MEMORY_MB ?? d.limits.memoryMb,
      cpuSeconds: env.TURNLINE_SANDBOX_CPU_SECONDS ?? d.limits.cpuSeconds,
      timeLimitSeconds: env.TURNLINE_SANDBOX_TIME_LIMIT_SECONDS ?? d.limits.timeLimitSeconds,
      maxProcesses: env.TURNLINE_SANDBOX_MAX_PROCESSES ?? d.limits.maxProcesses,
      fileSizeMb: env.TURNLINE_SANDBOX_FILE_SIZE_MB ?? d.limits.fileSizeMb,
      spoolMb: env.TURNLINE_SANDBOX_SPOOL_MB ?? d.limits.spoolMb,
    },
    tenant: {
      commands: env.TURNLINE_SANDBOX_TENANT_COMMANDS ?? d.tenant.commands,
      processes: env.TURNLINE_SANDBOX_TENANT_PROCESSES ?? d.tenant.processes,
      memoryMb: env.TURNLINE_SANDBOX_TENANT_MEMORY_MB ?? d.tenant.memoryMb,
      diskMb: env.TURNLINE_SANDBOX_TENANT_DISK_MB ?? d.tenant.diskMb,
      diskCheckSeconds: env.TURNLINE_SANDBOX_DISK_CHECK_SECONDS ?? d.tenant.diskCheckSeconds,
      diskWalkTimeoutMs: env.TURNLINE_SANDBOX_DISK_WALK_TIMEOUT_MS ?? d.tenant.diskWalkTimeoutMs,
    },
    tenantUids:
      env.TURNLINE_SANDBOX_TENANT_UIDS === undefined
        ? d.tenantUids
        : env.TURNLINE_SANDBOX_TENANT_UIDS,
    cgroups: env.TURNLINE_SANDBOX_CGROUPS ?? d.cgroups,
    passEnv: env.TURNLINE_SANDBOX_ENV ?? d.passEnv,
    readOnlyPaths: env.TURNLINE_SANDBOX_READ_ONLY ?? d.readOnlyPaths,
    privateSpoolGraceSeconds:
      env.TURNLINE_SANDBOX_PRIVATE_SPOOL_GRACE_SECONDS ?? d.privateSpoolGraceSeconds,
    egress: egressRulesFrom(env),
  }
}

/** Parses the sandbox variables of an environment record; problems name the variable. */
export function parseSandboxEnv(
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; settings: SandboxSettings } | { ok: false; problems: string[] } {
  const present: Record<string, string> = {}
  for (const name of Object.keys(SandboxEnvShape)) {
    const value = env[name]
    if (typeof value === 'string' && value.trim() !== '') present[name] = value
  }
  const parsed = SandboxEnvSchema.safeParse(present)
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`),
    }
  }
  return { ok: true, settings: sandboxSettingsFrom(parsed.data) }
}
