import { randomUUID } from 'node:crypto'

/** One message as SQS hands it to a consumer. */
export interface SqsMessage {
  MessageId: string
  ReceiptHandle: string
  Body: string
  Attributes?: Record<string, string>
}

/**
 * A queue on moto_server's SQS (the same process as its S3), spoken to in SQS's JSON protocol
 * as the AWS SDK does. moto does not check signatures; the authorization header only names the
 * region. Stands in for what Lambda's SQS event source does around the function: receive a batch,
 * invoke, delete what the function did not report failed.
 */
export class MotoSqsQueue {
  private constructor(
    private readonly endpoint: string,
    readonly url: string,
  ) {}

  static async create(endpoint: string, label: string): Promise<MotoSqsQueue> {
    const name = `turnline-${label}-${randomUUID().slice(0, 8)}`
    const created = await call<{ QueueUrl: string }>(endpoint, 'CreateQueue', { QueueName: name })
    return new MotoSqsQueue(endpoint, created.QueueUrl)
  }

  /** Up to `max` messages visible now, hidden for `visibilitySeconds` once received. */
  async receive(max = 10, visibilitySeconds = 300): Promise<SqsMessage[]> {
    const answer = await call<{ Messages?: SqsMessage[] }>(this.endpoint, 'ReceiveMessage', {
      QueueUrl: this.url,
      MaxNumberOfMessages: max,
      VisibilityTimeout: visibilitySeconds,
      WaitTimeSeconds: 0,
      MessageSystemAttributeNames: ['All'],
    })
    return answer.Messages ?? []
  }

  async send(body: string): Promise<void> {
    await call(this.endpoint, 'SendMessage', { QueueUrl: this.url, MessageBody: body })
  }

  async delete(message: SqsMessage): Promise<void> {
    await call(this.endpoint, 'DeleteMessage', {
      QueueUrl: this.url,
      ReceiptHandle: message.ReceiptHandle,
    })
  }

  /** Messages not deleted yet: visible, delayed or in flight (SQS's approximate counts, exact on moto). */
  async waiting(): Promise<number> {
    const answer = await call<{ Attributes: Record<string, string> }>(
      this.endpoint,
      'GetQueueAttributes',
      {
        QueueUrl: this.url,
        AttributeNames: [
          'ApproximateNumberOfMessages',
          'ApproximateNumberOfMessagesDelayed',
          'ApproximateNumberOfMessagesNotVisible',
        ],
      },
    )
    return (
      Number(answer.Attributes.ApproximateNumberOfMessages ?? 0) +
      Number(answer.Attributes.ApproximateNumberOfMessagesDelayed ?? 0) +
      Number(answer.Attributes.ApproximateNumberOfMessagesNotVisible ?? 0)
    )
  }

  async destroy(): Promise<void> {
    await call(this.endpoint, 'DeleteQueue', { QueueUrl: this.url })
  }
}

async function call<T>(endpoint: string, action: string, body: unknown): Promise<T> {
  const response = await fetch(`${endpoint}/`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `AmazonSQS.${action}`,
      authorization:
        'AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`SQS ${action} answered ${response.status}: ${text}`)
  return (text ? JSON.parse(text) : {}) as T
}

/** The SQS event Lambda's event source builds from received messages. */
export function sqsEvent(
  messages: readonly SqsMessage[],
  queueArn = 'arn:aws:sqs:us-east-1:123456789012:turnline',
) {
  return {
    Records: messages.map((message) => ({
      messageId: message.MessageId,
      receiptHandle: message.ReceiptHandle,
      body: message.Body,
      attributes: {
        ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? '1',
        SentTimestamp: String(Date.now()),
        SenderId: 'AIDAEXAMPLE',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: queueArn,
      awsRegion: 'us-east-1',
    })),
  }
}
