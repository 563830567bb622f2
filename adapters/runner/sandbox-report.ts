import type { SandboxStatusAnswer } from '../../src/contract/runner-answers.ts'
import { signedHeaders } from '../../src/contract/runner-signature.ts'
import type { SandboxStatus } from './command-sandbox.ts'

/** An answer the runner signs with its secret (the status route's), sent with its headers. */
export class SignedAnswer {
  constructor(
    readonly text: string,
    readonly headers: Record<string, string>,
  ) {}
}

/**
 * The runner's signed report of how it isolates commands (`POST /v1/sandbox/status`), echoing
 * the request's nonce: the server trusts it only when the signature is the shared secret's and
 * the nonce its own (adapters/sandbox-http/runner-sandbox-status.ts).
 */
export async function sandboxReport(
  status: SandboxStatus,
  secret: string,
  nonce: string,
): Promise<SignedAnswer> {
  const answer: SandboxStatusAnswer = {
    type: 'sandbox.status',
    nonce,
    sandbox:
      status.isolation === 'bwrap'
        ? { isolation: 'bwrap', version: status.version }
        : { isolation: 'none', reason: status.reason },
  }
  const text = JSON.stringify(answer)
  return new SignedAnswer(text, signedHeaders(secret, text, Date.now()))
}
