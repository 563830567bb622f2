/**
 * What became of an earlier acceptance of the same delivery id (the webhook route's replay
 * guard): `recorded`, its run was recorded (its session created, its turn queued or run);
 * `unrecorded`, it never said so — it was cut short (a crash, a failed write) before or after
 * recording the run, or is still under way (automation-run.ts, `deliverySession`).
 */
export type EarlierDelivery = 'recorded' | 'unrecorded'
