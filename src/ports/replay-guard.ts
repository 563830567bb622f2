/**
 * ReplayGuard: remembers the signed messages already accepted, by message id (the body's nonce
 * of a runner callback; `webhook-id` under Standard Webhooks), for as long as a replay could
 * still pass the signature's time window. Shared by every instance and kept across restarts
 * when it lives in the coordinator (Redis); an in-process guard only protects one process.
 */
export interface ReplayGuard {
  /** True the first time `messageId` is claimed; false for a replay before `expiresAtMs`. */
  claim(messageId: string, expiresAtMs: number): Promise<boolean>
}
