import { SignatureV4 } from '@smithy/signature-v4'
import type { AwsCredentialIdentity, Provider } from '@smithy/types'
import { WebSha256 } from '../shared/web-sha256.ts'

type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

export interface SqsQueueOptions {
  /** The queue's URL (`https://sqs.<region>.amazonaws.com/<account>/<name>`). */
  queueUrl: string
  /** The region to sign for when the URL does not name one (a local emulator's). */
  region?: string
  credentials: AwsCredentialIdentity | Provider<AwsCredentialIdentity>
  fetch?: FetchLike
}

/** The region an AWS queue URL names, if it is one (`sqs.<region>.amazonaws.com`). */
export function sqsRegionOf(queueUrl: string): string | undefined {
  const host = new URL(queueUrl).hostname
  return /^sqs\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/.exec(host)?.[1]
}

/**
 * Sends messages to one SQS queue: `SendMessage` in SQS's JSON protocol
 * (`X-Amz-Target: AmazonSQS.SendMessage`, `application/x-amz-json-1.0`), POSTed to the queue's
 * URL and signed with AWS Signature Version 4 by the AWS SDK's signer — the one call the
 * background bells need, without the SQS client package. An answer that is not 2xx throws with
 * SQS's error type and message.
 */
export class SqsQueue {
  private readonly signer: SignatureV4
  private readonly target: URL
  private readonly fetchImpl: FetchLike

  constructor(private readonly options: SqsQueueOptions) {
    this.target = new URL(options.queueUrl)
    this.signer = new SignatureV4({
      service: 'sqs',
      region: sqsRegionOf(options.queueUrl) ?? options.region ?? 'us-east-1',
      credentials: options.credentials,
      sha256: WebSha256,
    })
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init))
  }

  async send(body: string, delaySeconds = 0): Promise<void> {
    const payload = JSON.stringify({
      QueueUrl: this.options.queueUrl,
      MessageBody: body,
      ...(delaySeconds > 0 ? { DelaySeconds: Math.min(900, Math.ceil(delaySeconds)) } : {}),
    })
    const headers: Record<string, string> = {
      host: this.target.host,
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'AmazonSQS.SendMessage',
    }
    const signed = await this.signer.sign({
      method: 'POST',
      protocol: this.target.protocol,
      hostname: this.target.hostname,
      ...(this.target.port === '' ? {} : { port: Number(this.target.port) }),
      path: this.target.pathname,
      query: {},
      headers,
      body: payload,
    })
    const { host: _host, ...sendable } = signed.headers
    const response = await this.fetchImpl(this.target, {
      method: 'POST',
      headers: sendable,
      body: payload,
      signal: AbortSignal.timeout(10_000),
    })
    if (response.ok) {
      await response.body?.cancel()
      return
    }
    const text = await response.text()
    let reason = text.slice(0, 300)
    try {
      const error = JSON.parse(text) as { __type?: string; message?: string; Message?: string }
      reason = `${error.__type ?? 'error'}: ${error.message ?? error.Message ?? ''}`
    } catch {
      // not JSON: the text itself
    }
    throw new Error(`SQS SendMessage answered ${response.status}: ${reason}`)
  }
}
