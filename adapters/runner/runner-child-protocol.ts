import * as z from 'zod'
import { lazySchema } from '../../src/contract/lazy-schema.ts'
import type { EgressStatus } from './command-networks.ts'
import type { SandboxStatus } from './command-sandbox.ts'
import type { SandboxSettings } from './sandbox-settings.ts'

/**
 * What a Turnline server and the runner it starts as its child process (`child-main.ts`,
 * started by `runner-child.ts`) say to each other on the child's stdin and stdout. The secret
 * travels here, on a pipe only the two of them hold, never in the child's environment or argv.
 */

const limits = lazySchema(() =>
  z.object({
    memoryMb: z.number().int().positive(),
    cpuSeconds: z.number().int().positive(),
    timeLimitSeconds: z.number().int().positive(),
    maxProcesses: z.number().int().positive(),
    fileSizeMb: z.number().int().positive(),
    spoolMb: z.number().int().positive(),
  }),
)
const network = lazySchema(() => z.enum(['off', 'session', 'on']))

/** Typed against SandboxSettings: a setting added there must be carried here too. */
const SandboxSettingsSchema: z.ZodType<SandboxSettings> = lazySchema(() =>
  z.object({
    mode: z.enum(['auto', 'require', 'off']),
    network,
    uid: z.number().int().positive(),
    gid: z.number().int().positive(),
    limits,
    tenant: z.object({
      commands: z.number().int().positive(),
      processes: z.number().int().positive(),
      memoryMb: z.number().int().positive(),
      diskMb: z.number().int().positive(),
      diskCheckSeconds: z.number().int().positive(),
      diskWalkTimeoutMs: z.number().int().positive(),
    }),
    tenantUids: z.object({ first: z.number().int(), last: z.number().int() }).nullable(),
    cgroups: z.enum(['auto', 'off']),
    passEnv: z.array(z.string()),
    readOnlyPaths: z.array(z.string()),
    privateSpoolGraceSeconds: z.number().int().positive(),
    egress: z.object({
      allow: z.array(z.string()),
      deny: z.array(z.string()),
      dnsServers: z.array(z.string()),
    }),
  }),
)

/** The one line the child reads from stdin before anything else. */
export const RunnerChildConfigSchema = lazySchema(() =>
  z.object({
    /** Folder of the workspaces (absolute). */
    root: z.string().min(1),
    secret: z.string().min(16),
    callback_url: z.url().optional(),
    sandbox: SandboxSettingsSchema,
    /** Project mode (runner-server.ts): the one folder every session works in (absolute). */
    project: z.string().min(1).optional(),
    /** Tenants set up once the runner has answered (a single-tenant server's `local`). */
    prepare_tenants: z.array(z.string().min(1)).optional(),
    /** The least level of its log lines on stderr: `info` (every line, the default) or `warn`. */
    log_level: z.enum(['info', 'warn']).optional(),
  }),
)
export type RunnerChildConfig = z.infer<typeof RunnerChildConfigSchema>

const SandboxStatusSchema: z.ZodType<SandboxStatus> = lazySchema(() =>
  z.discriminatedUnion('isolation', [
    z.object({
      isolation: z.literal('bwrap'),
      bwrap: z.string(),
      version: z.string(),
      uid: z.number().int(),
      gid: z.number().int(),
      network,
      limits,
      tmpfs: z.object({ tmpMb: z.number().int(), shmMb: z.number().int() }).nullable(),
      seccomp: z.enum(['x86_64', 'aarch64']).nullable(),
      warnings: z.array(z.string()),
    }),
    z.object({
      isolation: z.literal('none'),
      reason: z.string(),
      uid: z.number().int(),
      limits: limits.nullable(),
    }),
  ]),
)

const EgressStatusSchema: z.ZodType<EgressStatus> = lazySchema(() =>
  z.discriminatedUnion('mode', [
    z.object({ mode: z.literal('proxy') }),
    z.object({ mode: z.literal('none'), reason: z.string() }),
  ]),
)

/**
 * The first line the child writes on stdout: it accepts requests, or why it cannot start. A
 * ready line without `egress` is followed by RunnerChildEgressSchema's line once the egress
 * probe has ended (commands allowed the network wait for it meanwhile); one with `egress` (a
 * runner that probed its egress before answering) is the whole answer.
 */
export const RunnerChildAnswerSchema = lazySchema(() =>
  z.union([
    z.object({
      listening: z.url(),
      pid: z.number().int(),
      sandbox: SandboxStatusSchema,
      egress: EgressStatusSchema.optional(),
    }),
    z.object({
      error: z.object({
        code: z.enum(['sandbox_unavailable', 'start_failed']),
        message: z.string(),
      }),
    }),
  ]),
)
export type RunnerChildAnswer = z.infer<typeof RunnerChildAnswerSchema>

/** The line after a ready line without `egress`: how commands allowed the network reach it. */
export const RunnerChildEgressSchema = lazySchema(() => z.object({ egress: EgressStatusSchema }))
