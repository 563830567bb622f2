import { describe, expect, it, vi } from 'vitest'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryTenantLimiter } from '../../adapters/memory/memory-tenant-limiter.ts'
import { tenantAdmission } from '../../functions/tenancy/tenant-admission.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import type { EffectiveLimits } from '../../src/contract/tenancy.ts'
import type { EndTurnRequest } from '../../src/ports/coordinator.ts'
import type { UsageCharge } from '../../src/ports/tenant-limiter.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { echoTool } from '../support/engine-deps.ts'
import { startScriptedEngine } from '../support/scripted-engine.ts'

/**
 * The per-tenant limiter's calls around a turn run beside the turn's other round trips where no
 * guarantee orders them (docs/performance.md, S3 + Upstash): a model call's settlement beside
 * the commits that follow it, the turn slot's release beside the coordinator's end of turn, the
 * daily quota check beside taking the slot. The turn still answers only once all are done.
 */

/** A gate that holds callers until `open()`; `held()` says whether one is waiting. */
function gate() {
  let waiting: (() => void)[] = []
  let closed = true
  return {
    pass: () =>
      closed ? new Promise<void>((resolve) => waiting.push(resolve)) : Promise.resolve(),
    held: () => waiting.length > 0,
    open() {
      closed = false
      for (const resolve of waiting) resolve()
      waiting = []
    },
  }
}

/** A memory limiter whose settlements and slot releases wait at gates, and are recorded. */
class GatedLimiter extends MemoryTenantLimiter {
  readonly settles = gate()
  readonly releases = gate()
  readonly usages = gate()
  readonly settled: string[] = []
  released = 0
  acquired = 0
  override async usageToday(tenant: string) {
    await this.usages.pass()
    return super.usageToday(tenant)
  }
  override async acquireSlot(tenant: string, slot: string, limit: number, ttlMs: number) {
    this.acquired += 1
    return super.acquireSlot(tenant, slot, limit, ttlMs)
  }
  override async settle(tenant: string, id: string, charge: UsageCharge): Promise<boolean> {
    await this.settles.pass()
    this.settled.push(id)
    return super.settle(tenant, id, charge)
  }
  override async releaseSlot(tenant: string, slot: string): Promise<void> {
    await this.releases.pass()
    this.released += 1
    return super.releaseSlot(tenant, slot)
  }
}

/** A memory coordinator that records endTurn calls as they start. */
class WatchedCoordinator extends MemoryCoordinator {
  readonly ending: EndTurnRequest[] = []
  override endTurn(request: EndTurnRequest): Promise<void> {
    this.ending.push(request)
    return super.endTurn(request)
  }
}

function admissionOn(limiter: MemoryTenantLimiter, defaults: EffectiveLimits) {
  return tenantAdmission({
    limiter,
    defaults,
    slotTtlMs: 60_000,
    reservationTtlMs: 60_000,
    defaultOutputTokens: 1000,
    clock: systemClock,
  })
}

/** Waits (up to 5 s) until `done()` holds. */
async function until(done: () => boolean): Promise<void> {
  await vi.waitFor(() => expect(done()).toBe(true), { timeout: 5000, interval: 5 })
}

/** Lets every piece of work already started run as far as it can (one macrotask turn). */
const drained = () => new Promise<void>((resolve) => setImmediate(resolve))

describe("the limiter's calls overlapped with the turn's round trips", () => {
  it("a model call's settlement runs beside the commits after it; the turn answers after it", async () => {
    const limiter = new GatedLimiter()
    limiter.releases.open()
    limiter.usages.open()
    const engine = startScriptedEngine({
      admission: admissionOn(limiter, { tokensPerDay: 1_000_000, concurrentTurns: 4 }),
    })
    const { session_id } = await engine.service.createSession('t1', {
      tools: [echoTool(engine.receiver.url)],
    })
    engine.model.enqueue(
      { toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }] },
      { text: 'done' },
    )
    const turn = engine.service.stepTurn('t1', session_id, { input: 'go' }, {})
    let answered = false
    void turn.then(() => {
      answered = true
    })
    // Both calls' settlements are held: the tool invocation is committed and the tool runs, the
    // second call is made and the turn's final batch is committed all the same.
    await until(() => engine.receiver.calls.length === 1 && engine.model.requests.length === 2)
    await vi.waitFor(
      async () => {
        const page = await engine.service.readEvents('t1', session_id, -1, 1000)
        expect(page.events.map((e) => e.line.event.type)).toContain('turn.completed')
      },
      { timeout: 5000, interval: 5 },
    )
    await drained()
    expect(limiter.settled).toEqual([])
    expect(answered).toBe(false)
    limiter.settles.open()
    expect((await turn).status).toBe('completed')
    expect(limiter.settled).toHaveLength(2)
    expect((await limiter.usageToday('t1')).tokens).toBeGreaterThan(0)
    expect((await limiter.usageToday('t1')).reservedTokens).toBe(0)
  })

  it('the turn slot is given back while the coordinator ends the turn; it answers after both', async () => {
    const limiter = new GatedLimiter()
    limiter.settles.open()
    limiter.usages.open()
    const coordinator = new WatchedCoordinator()
    const engine = startScriptedEngine({
      coordinator,
      admission: admissionOn(limiter, { concurrentTurns: 1 }),
    })
    const { session_id } = await engine.service.createSession('t1', {})
    engine.model.enqueue({ text: 'hello' })
    const turn = engine.service.stepTurn('t1', session_id, { input: 'hi' }, {})
    let answered = false
    void turn.then(() => {
      answered = true
    })
    // The slot's release is held: endTurn has started all the same.
    await until(() => limiter.releases.held() && coordinator.ending.length === 1)
    await drained()
    expect(answered).toBe(false)
    expect(await limiter.activeSlots('t1')).toBe(1)
    limiter.releases.open()
    expect((await turn).status).toBe('completed')
    expect(limiter.released).toBe(1)
    expect(await limiter.activeSlots('t1')).toBe(0)
  })

  it('a step the daily quota refuses gives back the slot it took meanwhile', async () => {
    const limiter = new GatedLimiter()
    limiter.settles.open()
    limiter.releases.open()
    const admission = admissionOn(limiter, { tokensPerDay: 100, concurrentTurns: 1 })
    await limiter.settle('t1', 'earlier-call', { tokens: 100, costMicroUsd: 0 })
    let ran = false
    const refusing = admission
      .step('t1', async () => {
        ran = true
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      )
    // The slot is asked for while today's usage is still being read.
    await until(() => limiter.usages.held() && limiter.acquired === 1)
    limiter.usages.open()
    const refused = await refusing
    expect(isTurnlineError(refused, 'quota_exceeded')).toBe(true)
    expect(ran).toBe(false)
    expect(await limiter.activeSlots('t1')).toBe(0)
    // Over the slot limit with the quota free, the slot's own refusal answers.
    const other = admissionOn(limiter, { concurrentTurns: 1 })
    await limiter.acquireSlot('t1', 'held-elsewhere', 1, 60_000)
    const full = await other
      .step('t1', async () => undefined)
      .then(
        () => undefined,
        (error: unknown) => error,
      )
    expect(isTurnlineError(full, 'too_many_concurrent_turns')).toBe(true)
  })
})
