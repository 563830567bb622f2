import { TurnlineError } from '../../contract/errors.ts'
import type { HookConfig, HttpHook } from '../../contract/hook-config.ts'
import type { OutputArtifact } from '../../contract/output-artifact.ts'
import { standardWebhookHeaders } from '../../contract/standard-webhooks.ts'
import { transportFailureText } from '../../contract/transport-failure.ts'
import { deadlineSignal } from '../../shared/deadline-signal.ts'
import { hostListed } from '../../shared/host-list.ts'
import type { HttpToolPolicy } from '../engine/service-deps.ts'
import { captureOutput } from '../tools/output-capture.ts'
import { readLimited } from '../tools/read-limited.ts'
import { bounded, type HookAnswer, parseHookAnswer } from './hook-answer.ts'
import { type HookKeeping, keptAnswerNote, keptAnswerText } from './hook-artifact.ts'

/** The HTTP side of hooks: the same allow-list, tenant secret and fetch as HTTP tools. */
export type HookHttpPolicy = Pick<HttpToolPolicy, 'fetch' | 'allowedHosts' | 'secretFor'> & {
  /** Answer bytes read; the rest is ignored (default 64 KiB). */
  maxResponseBytes?: number
}

/** One hook run, before it is turned into a result record. */
export interface HookAttempt {
  ok: boolean
  answer: HookAnswer
  error?: string
  timedOut?: boolean
  /** HTTP status of an HTTP hook. */
  status?: number
  /** Exit code of a command hook. */
  exitCode?: number
  /** The output artifact keeping an answer over the inline limit whole. */
  artifact?: OutputArtifact
}

const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024

/** True when the URL's host (or host:port) is on the allow-list ('*' allows any). */
export function hookHostAllowed(allowedHosts: readonly string[], url: string): boolean {
  return hostListed(allowedHosts, new URL(url))
}

/** Refuses (400) HTTP hooks whose host is not allow-listed: call at session creation. */
export function assertHooksAllowed(
  policy: Pick<HookHttpPolicy, 'allowedHosts'>,
  hooks: readonly HookConfig[],
): void {
  hooks.forEach((hook, index) => {
    if (hook.type !== 'http' || hookHostAllowed(policy.allowedHosts, hook.url)) return
    throw new TurnlineError(
      'invalid_input',
      `hooks[${index}]: host ${new URL(hook.url).host} is not allowed for HTTP hooks ` +
        `(allowed: ${policy.allowedHosts.length ? policy.allowedHosts.join(', ') : 'none'}; ` +
        'set TURNLINE_TOOL_ALLOWED_HOSTS)',
      { details: { field: 'hooks', index } },
    )
  })
}

export interface HttpHookRequest {
  tenant: string
  sessionId: string
  /** The config event name (`pre_tool_use`, …), sent as `turnline-hook-event`. */
  event: string
  /** Epoch ms, for the signed timestamp. */
  now: number
  signal?: AbortSignal
}

/**
 * POSTs the payload signed with Standard Webhooks (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`), no redirects,
 * within the hook's timeout. Never throws.
 */
export async function callHttpHook(
  hook: HttpHook,
  body: string,
  request: HttpHookRequest,
  policy: HookHttpPolicy,
  /** Where an answer over the inline limit is kept whole; without it, it is cut. */
  kept?: HookKeeping,
): Promise<HookAttempt> {
  const deadline = deadlineSignal(hook.timeout_ms, request.signal)
  try {
    if (!hookHostAllowed(policy.allowedHosts, hook.url)) {
      return { ok: false, answer: {}, error: `host ${new URL(hook.url).host} is not allowed` }
    }
    const signed = standardWebhookHeaders({
      secret: policy.secretFor(request.tenant),
      id: `msg_${crypto.randomUUID()}`,
      body,
      nowMs: request.now,
    })
    const response = await policy.fetch(hook.url, {
      method: 'POST',
      redirect: 'manual',
      signal: deadline.signal,
      headers: {
        'content-type': 'application/json',
        ...signed,
        'turnline-session': request.sessionId,
        'turnline-hook-event': request.event,
      },
      body,
    })
    return await attemptOf(response, policy.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, kept)
  } catch (error) {
    const name = (error as Error).name
    if (request.signal?.aborted) return { ok: false, answer: {}, error: 'cancelled' }
    if (name === 'TimeoutError' || name === 'AbortError') {
      return {
        ok: false,
        answer: {},
        timedOut: true,
        error: `timed out after ${hook.timeout_ms} ms`,
      }
    }
    return { ok: false, answer: {}, error: `could not be reached: ${transportFailureText(error)}` }
  } finally {
    deadline.clear()
  }
}

/** The hook's attempt from its answer: a 2xx body may decide; anything else is a failure. */
async function attemptOf(
  response: Response,
  limit: number,
  kept?: HookKeeping,
): Promise<HookAttempt> {
  const read = await readAnswer(response, limit, kept)
  const artifact = read.artifact ? { artifact: read.artifact } : {}
  const status = response.status
  if ('error' in read) return { ok: false, answer: {}, status, error: read.error, ...artifact }
  const note = read.artifact ? ` (${keptAnswerNote(read.artifact)})` : ''
  if (status < 200 || status >= 300) {
    const detail = read.text.trim() ? `: ${bounded(read.text.trim(), 500)}` : ''
    return { ok: false, answer: {}, status, error: `HTTP ${status}${detail}${note}`, ...artifact }
  }
  const answer = parseHookAnswer(read.text)
  if (answer.decision === 'deny' && note) answer.reason = `${answer.reason ?? 'denied'}${note}`
  return { ok: true, answer, status, ...artifact }
}

type AnswerRead = ({ text: string } | { error: string }) & { artifact?: OutputArtifact }

/**
 * The answer's text: up to `limit` bytes; beyond, with `kept`, the whole answer is kept as an
 * output artifact and read back when short enough to hold a decision (else the hook failed).
 */
async function readAnswer(
  response: Response,
  limit: number,
  kept?: HookKeeping,
): Promise<AnswerRead> {
  if (!kept) return { text: (await readLimited(response, limit)).text }
  const captured = await captureOutput(response, limit, kept.keeping)
  if (captured.kind === 'inline') return { text: captured.text }
  if (captured.kind === 'too_large') {
    return {
      error: `answer not kept: ${captured.text.slice(captured.text.lastIndexOf('\n[') + 2, -1)}`,
    }
  }
  const read = await keptAnswerText(kept.keeping.artifacts, captured.artifact)
  return { ...read, artifact: captured.artifact }
}
