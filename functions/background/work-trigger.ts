import type { WorkLocation } from '../../src/contract/work-record.ts'

/**
 * What a route needs to ring the bell once background work is recorded in the store: the
 * server's own worker (Node), or a platform queue that wakes one (a Cloudflare Queue, SQS).
 * The route awaits it before it answers 202, so a queue's send is made inside the request; it
 * never rejects — a bell that cannot ring is logged and left to the sweep, since the record is
 * already durable.
 */
export interface WorkTrigger {
  wake(at: WorkLocation): void | Promise<void>
}
