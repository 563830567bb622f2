/**
 * What became of an earlier acceptance of the same delivery id (the webhook route's replay
 * guard): `recorded`, its session stood (created or found, before its turn was queued or run:
 * the turn is idempotent on the delivery id from then on); `unrecorded`, it never said so — it
 * was cut short (a crash, a failed write) before or after creating the session, or is still
 * under way (automation-run.ts, `deliverySession`).
 */
export type EarlierDelivery = 'recorded' | 'unrecorded'
