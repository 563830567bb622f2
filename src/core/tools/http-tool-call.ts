import { isTurnlineError, TurnlineError } from '../../contract/errors.ts'
import type { HttpTool } from '../../contract/http-tool-config.ts'
import { standardWebhookHeaders } from '../../contract/standard-webhooks.ts'
import { transportFailureText } from '../../contract/transport-failure.ts'
import { deadlineSignal } from '../../shared/deadline-signal.ts'
import { hostListed } from '../../shared/host-list.ts'
import type { HttpToolPolicy } from '../engine/service-deps.ts'
import { stoppedCallOutput } from '../turn/invocation-deadline.ts'
import type { OutputKeeping } from './kept-output.ts'
import { captureOutput } from './output-capture.ts'

export interface HttpToolResult {
  ok: boolean
  /** What the model and the tool_output item see (bounded). */
  output: string
  status?: number
  /** The output artifact holding the whole answer, when it was over the inline limit. */
  artifactId?: string
}

/** Whether the URL's host (or host:port) is allow-listed for tools (HTTP and MCP). */
export function hostAllowed(policy: Pick<HttpToolPolicy, 'allowedHosts'>, url: URL): boolean {
  return hostListed(policy.allowedHosts, url)
}

/** Refuses a tool whose URL host is not allow-listed (checked at session creation and call). */
export function assertToolAllowed(
  policy: Pick<HttpToolPolicy, 'allowedHosts'>,
  tool: HttpTool,
): void {
  const url = new URL(tool.url)
  const host = url.host.toLowerCase()
  if (!hostAllowed(policy, url)) {
    throw new TurnlineError(
      'invalid_input',
      `tool ${tool.name}: host ${host} is not allowed for HTTP tools ` +
        `(allowed: ${policy.allowedHosts.length ? policy.allowedHosts.join(', ') : 'none'}; ` +
        'set TURNLINE_TOOL_ALLOWED_HOSTS)',
      { details: { field: 'tools', tool: tool.name } },
    )
  }
}

/**
 * POSTs the validated arguments (the model's exact text) to the tool's URL, signed, with a timeout, no redirects, and a
 * bounded read of the answer. Failures are results for the model, not exceptions.
 */
export async function callHttpTool(
  policy: HttpToolPolicy,
  /** `windowMs`: the call's timeout is cut to it (the platform's timeout is near: Lambda). */
  request: {
    tenant: string
    sessionId: string
    toolCallId: string
    now: number
    windowMs?: number
  },
  tool: HttpTool,
  /** The validated argument text, forwarded byte for byte (no precision lost, key order kept). */
  rawArguments: string,
  signal?: AbortSignal,
  /** Where an answer over the inline limit is kept whole; without it, it is cut. */
  keeping?: OutputKeeping,
): Promise<HttpToolResult> {
  assertToolAllowed(policy, tool)
  const args = rawArguments.trim() === '' ? '{}' : rawArguments.trim()
  const body = `{"tool":${JSON.stringify(tool.name)},"arguments":${args},"session_id":${JSON.stringify(request.sessionId)},"tool_call_id":${JSON.stringify(request.toolCallId)}}`
  // Standard Webhooks; the message id is the call's idempotency key, so a retried call carries
  // the id a receiver already saw.
  const signed = standardWebhookHeaders({
    secret: policy.secretFor(request.tenant),
    id: `${request.sessionId}:${request.toolCallId}`,
    body,
    nowMs: request.now,
  })
  const ownMs = tool.timeout_ms ?? policy.timeoutMs
  const timeoutMs = Math.min(ownMs, request.windowMs ?? ownMs)
  const deadline = deadlineSignal(timeoutMs, signal)
  try {
    const response = await policy.fetch(tool.url, {
      method: 'POST',
      redirect: 'manual',
      signal: deadline.signal,
      headers: {
        'content-type': 'application/json',
        ...signed,
        'turnline-session': request.sessionId,
        'idempotency-key': `${request.sessionId}:${request.toolCallId}`,
      },
      body,
    })
    const captured = await captureOutput(response, policy.maxResponseBytes, keeping)
    const kept = captured.kind === 'artifact' ? { artifactId: captured.artifact.id } : {}
    const status = response.status
    if (status >= 200 && status < 300 && captured.kind !== 'too_large') {
      return { ok: true, output: captured.text, status, ...kept }
    }
    return { ok: false, output: `HTTP ${status}: ${captured.text}`, status, ...kept }
  } catch (error) {
    // An abort, or a fault of the store keeping the answer: not the tool's failure.
    if (signal?.aborted || isTurnlineError(error, 'storage_unavailable', 'corrupt_data'))
      throw error
    return { ok: false, output: failureOutput(error, tool.name, timeoutMs, ownMs) }
  } finally {
    deadline.clear()
  }
}

/** A call that got no answer: timed out, stopped before the platform's timeout, or unreached. */
function failureOutput(error: unknown, tool: string, timeoutMs: number, ownMs: number): string {
  const name = (error as Error).name
  if (name !== 'TimeoutError' && name !== 'AbortError') {
    return `tool ${tool} could not be reached: ${transportFailureText(error)}`
  }
  // Cut to the time the platform's timeout leaves: it started, so it is not run again.
  if (timeoutMs < ownMs) return stoppedCallOutput(tool, timeoutMs)
  return `tool ${tool} timed out after ${timeoutMs} ms`
}
