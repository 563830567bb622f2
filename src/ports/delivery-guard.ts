/**
 * DeliveryGuard: the ReplayGuard of signed messages that start work (webhook deliveries), which
 * knows two things of a delivery id for as long as it is told to (at least while a replay could
 * still pass the signature's time window; a sender's retries, signed anew, come for days): that
 * it was accepted (`claim`), and that its work was recorded after that (`recorded`). An id
 * accepted whose work was never recorded was cut short (a crash, a failed write) or is still
 * under way: its resend must still get its work done, never a refusal, while a replay of one
 * whose work was recorded is answered from that work. In the coordinator it is shared by every
 * instance and kept across restarts; an in-process guard only protects one process.
 */
export interface DeliveryGuard {
  /**
   * Accepts `messageId` until `expiresAtMs`: `first` the first time; for a message accepted
   * before, `recorded` once `recorded` was called for it, else `unrecorded`.
   */
  claim(messageId: string, expiresAtMs: number): Promise<DeliveryClaim>
  /** The message's work is recorded: every later claim answers `recorded`. */
  recorded(messageId: string, expiresAtMs: number): Promise<void>
}

export type DeliveryClaim = 'first' | 'recorded' | 'unrecorded'
