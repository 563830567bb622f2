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

/** Messages one SendMessageBatch may carry. */
const BATCH = 10
/** SQS's longest delay on a message, and its longest visibility timeout. */
const MAX_DELAY_SECONDS = 900
const MAX_VISIBILITY_SECONDS = 43_200

/** The region an AWS queue URL names, if it is one (`sqs.<region>.amazonaws.com`). */
export function sqsRegionOf(queueUrl: string): string | undefined {
  const host = new URL(queueUrl).hostname
  return /^sqs\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/.exec(host)?.[1]
}

/**
 * One SQS queue, as a producer of JSON message bodies (the shape of a Cloudflare Queue's
 * producer binding, so the same trigger drives both) and as what a consumer needs beyond the
 * event source: SendMessage, SendMessageBatch and ChangeMessageVisibility in SQS's JSON protocol
 * (`X-Amz-Target: AmazonSQS.<Action>`, `application/x-amz-json-1.0`), POSTed to the queue's URL
 * and signed with AWS Signature Version 4 by the AWS SDK's signer — without the SQS client
 * package. An answer that is not 2xx, or a batch entry SQS refused, throws with SQS's reason.
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

  async send(body: unknown, options: { delaySeconds?: number } = {}): Promise<void> {
    const delay = Math.min(MAX_DELAY_SECONDS, Math.ceil(options.delaySeconds ?? 0))
    await this.call('SendMessage', {
      MessageBody: JSON.stringify(body),
      ...(delay > 0 ? { DelaySeconds: delay } : {}),
    })
  }

  async sendBatch(messages: Iterable<{ body: unknown }>): Promise<void> {
    const all = [...messages]
    for (let start = 0; start < all.length; start += BATCH) {
      const entries = all.slice(start, start + BATCH).map((message, i) => ({
        Id: String(i),
        MessageBody: JSON.stringify(message.body),
      }))
      const answer = (await this.call('SendMessageBatch', { Entries: entries })) as {
        Failed?: { Code?: string; Message?: string }[]
      }
      const failed = answer.Failed ?? []
      if (failed.length > 0) {
        const first = failed[0]
        throw new Error(
          `SQS SendMessageBatch refused ${failed.length} of ${entries.length}: ${first?.Code ?? ''} ${first?.Message ?? ''}`,
        )
      }
    }
  }

  /** Hides a received message for `seconds` from now (what a delayed redelivery is on SQS). */
  async changeVisibility(receiptHandle: string, seconds: number): Promise<void> {
    await this.call('ChangeMessageVisibility', {
      ReceiptHandle: receiptHandle,
      VisibilityTimeout: Math.max(0, Math.min(MAX_VISIBILITY_SECONDS, Math.ceil(seconds))),
    })
  }

  private async call(action: string, fields: Record<string, unknown>): Promise<unknown> {
    const payload = JSON.stringify({ QueueUrl: this.options.queueUrl, ...fields })
    const headers: Record<string, string> = {
      host: this.target.host,
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `AmazonSQS.${action}`,
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
    const text = await response.text()
    if (response.ok) return text ? (JSON.parse(text) as unknown) : {}
    let reason = text.slice(0, 300)
    try {
      const error = JSON.parse(text) as { __type?: string; message?: string; Message?: string }
      reason = `${error.__type ?? 'error'}: ${error.message ?? error.Message ?? ''}`
    } catch {
      // not JSON: the text itself
    }
    throw new Error(`SQS ${action} answered ${response.status}: ${reason}`)
  }
}
