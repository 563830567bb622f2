import {
  type SandboxStatusAnswer,
  SandboxStatusAnswerSchema,
} from '../../src/contract/runner-answers.ts'
import {
  ID_HEADER,
  newNonce,
  SIGNATURE_HEADER,
  signedHeaders,
  TIMESTAMP_HEADER,
  verifyRunnerMessage,
} from '../../src/contract/runner-signature.ts'
import { transportFailureText } from '../../src/contract/transport-failure.ts'
import { safeJson } from './runner-answer.ts'

/** How a runner isolates commands, as it reported in a signed answer; or why that is unknown. */
export type RunnerSandbox =
  | { known: true; sandbox: SandboxStatusAnswer['sandbox'] }
  | { known: false; why: string }

/**
 * Asks the runner how it isolates commands (`POST /v1/sandbox/status`) and believes the answer
 * only when it is signed with the shared secret and echoes this request's nonce, so neither
 * another process on the runner's address nor a recorded answer can claim a sandbox.
 */
export async function runnerSandbox(options: {
  url: string
  secret: string
  fetch: typeof fetch
  now: () => number
  timeoutMs?: number
}): Promise<RunnerSandbox> {
  const nonce = newNonce()
  const text = JSON.stringify({ nonce })
  let response: Response
  let answer: string
  try {
    response = await options.fetch(`${options.url.replace(/\/+$/, '')}/v1/sandbox/status`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/json',
        ...(await signedHeaders(options.secret, text, options.now())),
      },
      body: text,
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    })
    answer = await response.text()
  } catch (error) {
    return { known: false, why: `unreachable: ${transportFailureText(error)}` }
  }
  if (response.status !== 200) {
    return {
      known: false,
      why: `it answered ${response.status} to /v1/sandbox/status (a runner too old to report its sandbox, or another secret)`,
    }
  }
  const check = await verifyRunnerMessage({
    secret: options.secret,
    body: answer,
    id: response.headers.get(ID_HEADER) ?? undefined,
    timestamp: response.headers.get(TIMESTAMP_HEADER) ?? undefined,
    signature: response.headers.get(SIGNATURE_HEADER) ?? undefined,
    nowMs: options.now(),
  })
  if (!check.ok) return { known: false, why: `its answer is not signed: ${check.message}` }
  const parsed = SandboxStatusAnswerSchema.safeParse(safeJson(answer))
  if (!parsed.success || parsed.data.nonce !== nonce) {
    return { known: false, why: 'its signed answer is not an answer to this request' }
  }
  return { known: true, sandbox: parsed.data.sandbox }
}
