import * as z from 'zod'
import { linearRegexProblem } from '../shared/linear-regex.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * Lifecycle hooks of a session (`hooks` of `POST /v1/sessions`): a flat list, each entry bound to
 * one event. Semantics (payloads, answers, denial) are in docs/hooks.md.
 */

export const HOOK_EVENTS = [
  'session_start',
  'pre_compact',
  'pre_tool_use',
  'post_tool_use',
  'stop',
] as const
export const HookEventSchema = lazySchema(() => z.enum(HOOK_EVENTS))
export type HookEvent = z.infer<typeof HookEventSchema>

/** `session_start.source`. */
export const SESSION_START_SOURCES = ['startup', 'resume', 'fork', 'compact'] as const
export const SessionStartSourceSchema = lazySchema(() => z.enum(SESSION_START_SOURCES))
export type SessionStartSource = z.infer<typeof SessionStartSourceSchema>

/** VT Code's default hook timeout: 60 s. */
export const DEFAULT_HOOK_TIMEOUT_MS = 60_000

/**
 * Why `pattern` is not usable as a new matcher (`""`, `"*"`, or a regular expression the
 * linear-time engine runs: no back-references or lookarounds, src/shared/linear-regex.ts), or
 * undefined. Checked on the settings a request sends (session-config.ts `readSessionConfig`); a
 * stored session's matcher need only be a regular expression (`isValidMatcher`), so a session
 * stored before this check still reads (its matcher then matches everything: hook-matcher.ts).
 */
export function matcherProblem(pattern: string): string | undefined {
  if (pattern === '' || pattern === '*') return undefined
  return linearRegexProblem(`^(?:${pattern})$`)
}

/** True when `pattern` is a matcher a stored session may hold (`""`, `"*"`, a regular expression). */
export function isValidMatcher(pattern: string): boolean {
  if (pattern === '' || pattern === '*') return true
  try {
    new RegExp(`^(?:${pattern})$`)
    return true
  } catch {
    return false
  }
}

const MatcherSchema = lazySchema(() =>
  z.string().max(200).refine(isValidMatcher, 'matcher is not a valid regular expression'),
)

const common = {
  event: HookEventSchema.describe('The lifecycle event the hook runs on.'),
  name: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'use 1–64 characters from A-Z a-z 0-9 _ . : -')
    .optional()
    .describe('A label for results and logs; defaults to `<event>#<index>`.'),
  matcher: MatcherSchema.optional().describe(
    'Full-match regular expression (`^(?:matcher)$`) against the tool name (pre/post_tool_use), the trigger (pre_compact) or the source (session_start). Empty or `*` matches everything. Not accepted for `stop`.',
  ),
  blocking: z
    .boolean()
    .default(false)
    .describe("Only a blocking hook's answer counts: it may deny a `pre_tool_use`."),
  fail_closed: z
    .boolean()
    .default(false)
    .describe('Blocking hooks only: a failure or timeout denies instead of being ignored.'),
  timeout_ms: z
    .number()
    .int()
    .positive()
    .max(600_000)
    .default(DEFAULT_HOOK_TIMEOUT_MS)
    .describe('How long the hook may take (ms).'),
}

/** POSTs the payload, signed, to an allow-listed URL. */
export const HttpHookSchema = lazySchema(() =>
  z.strictObject({
    ...common,
    type: z.literal('http').describe('Always `http`.'),
    url: z
      .url({ protocol: /^https?$/ })
      .describe("Where the hook's payload is POSTed (http or https)."),
  }),
)
export type HttpHook = z.infer<typeof HttpHookSchema>

/** Runs `sh -c <command>` in the session's sandbox with the payload on stdin. */
export const CommandHookSchema = lazySchema(() =>
  z.strictObject({
    ...common,
    type: z.literal('command').describe('Always `command`.'),
    command: z
      .string()
      .min(1)
      .max(10_000)
      .describe('The shell command run in the sandbox with the payload on stdin.'),
  }),
)
export type CommandHook = z.infer<typeof CommandHookSchema>

export const HookConfigSchema = lazySchema(() =>
  z.discriminatedUnion('type', [HttpHookSchema, CommandHookSchema]).superRefine((hook, ctx) => {
    if (hook.event === 'stop' && hook.matcher !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message: 'stop hooks take no matcher',
        path: ['matcher'],
      })
    }
    if (hook.fail_closed && !hook.blocking) {
      ctx.addIssue({
        code: 'custom',
        message: 'fail_closed needs blocking: true',
        path: ['fail_closed'],
      })
    }
  }),
)
export type HookConfig = z.infer<typeof HookConfigSchema>
export type HookConfigInput = z.input<typeof HookConfigSchema>

export const HooksSchema = lazySchema(() => z.array(HookConfigSchema).max(64).default([]))
