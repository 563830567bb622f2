import { describe, expect, it } from 'vitest'
import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { coordinatorId } from '../../src/core/engine/with-lease.ts'
import { startScriptedEngine } from '../support/scripted-engine.ts'

/**
 * Creating a session tells the coordinator its tip (batch 0), so the first turn on the same
 * process trusts the snapshot cached at creation, as every later turn does, and does not list
 * the session's log. Best effort: a coordinator that fails to record it leaves a session that
 * is created all the same, whose first turn probes the log.
 */
class TipRefusingCoordinator extends MemoryCoordinator {
  override async setTip(): Promise<void> {
    throw new Error('the coordinator is unreachable')
  }
}

async function firstTurnLists(coordinator: MemoryCoordinator) {
  const counting = countingObjectStore(new MemoryObjectStore())
  const engine = startScriptedEngine({ store: counting.store, coordinator })
  const { session_id } = await engine.service.createSession('t1', {})
  const tip = await coordinator.getTip(
    coordinatorId({ tenant: 't1', workspace: 'default', sessionId: session_id }),
  )
  engine.model.enqueue({ text: 'hello' })
  counting.reset()
  const result = await engine.service.stepTurn('t1', session_id, { input: 'hi' })
  engine.model.assertDone()
  return { tip, lists: counting.counts.list, status: result.status, logs: engine.logs }
}

describe("a new session's tip recorded at creation", () => {
  it('is batch 0, and the first turn lists the log once fewer than without it', async () => {
    const recorded = await firstTurnLists(new MemoryCoordinator())
    const refused = await firstTurnLists(new TipRefusingCoordinator())
    expect(recorded.tip).toBe(0)
    expect(refused.tip).toBeNull()
    expect(recorded.status).toBe(refused.status)
    expect(recorded.lists).toBe(refused.lists - 1)
  })

  it('is best effort: a coordinator that cannot record it leaves the session created, and says so', async () => {
    const refused = await firstTurnLists(new TipRefusingCoordinator())
    expect(refused.status).toBe('completed')
    expect(refused.logs).toContainEqual({
      msg: 'recording the tip of a new session failed',
      error: 'Error: the coordinator is unreachable',
    })
  })
})
