import { Refusal } from './refusal.ts'

/**
 * The running-commands cap of each tenant (TURNLINE_SANDBOX_TENANT_COMMANDS): a start takes a
 * slot synchronously before anything else, so concurrent starts cannot all slip under the cap,
 * and gives it back once its command has settled (or when the start failed).
 */
export class CommandSlots {
  readonly #taken = new Map<string, number>()

  constructor(private readonly cap: number) {}

  /** Commands of `tenant` holding a slot. */
  held(tenant: string): number {
    return this.#taken.get(tenant) ?? 0
  }

  /** Takes a slot, or refuses (409) naming the limit and the setting; returns its release. */
  take(tenant: string): () => void {
    const held = this.held(tenant)
    if (held >= this.cap) {
      throw new Refusal(
        'conflict',
        `this tenant already runs ${held} commands, its limit (TURNLINE_SANDBOX_TENANT_COMMANDS=` +
          `${this.cap}); wait for one to end or close one, then start again`,
        { limit: 'TURNLINE_SANDBOX_TENANT_COMMANDS', running: held, max: this.cap },
      )
    }
    this.#taken.set(tenant, held + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      const left = this.held(tenant) - 1
      if (left > 0) this.#taken.set(tenant, left)
      else this.#taken.delete(tenant)
    }
  }
}
