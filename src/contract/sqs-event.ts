import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * What Lambda's SQS event source hands the function (the fields Turnline reads): a batch of
 * messages, each with its id — what a partial batch response names to have it delivered again
 * — its receipt handle (to delay that redelivery), its body, and how often it was received.
 */
export const SqsEventSchema = lazySchema(() =>
  z
    .object({
      Records: z.array(
        z
          .object({
            messageId: z.string().min(1),
            receiptHandle: z.string().min(1),
            body: z.string(),
            attributes: z
              .object({ ApproximateReceiveCount: z.string().regex(/^\d{1,9}$/) })
              .loose(),
          })
          .loose(),
      ),
    })
    .loose(),
)
export type SqsEvent = z.infer<typeof SqsEventSchema>

/** The partial batch response (`ReportBatchItemFailures`): the messages to deliver again. */
export interface SqsBatchResponse {
  batchItemFailures: { itemIdentifier: string }[]
}
