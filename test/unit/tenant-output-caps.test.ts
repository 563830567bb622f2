import { afterEach, describe, expect, it } from 'vitest'
import { MemoryTenantLimiter } from '../../adapters/memory/memory-tenant-limiter.ts'
import { limitsOf, type Tenancy } from '../../functions/tenancy/tenancy.ts'
import { tenantAdmission } from '../../functions/tenancy/tenant-admission.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import type { TenantLimits } from '../../src/contract/tenancy.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { startScriptedEngine } from '../support/scripted-engine.ts'

/**
 * A tenant's own caps on kept output (registry `output_bytes_per_output`,
 * `output_bytes_per_session`): the lower of the tenant's and the deployment's applies, to tool
 * outputs and to long input texts alike, and the 413 names the tenant's limit when it is the one
 * that refused; a tenant without them keeps the deployment's.
 */
const OVERRIDES: Record<string, TenantLimits> = {
  small: { output_bytes_per_output: 150_000 },
  tight: { output_bytes_per_session: 250_000 },
  lifted: { output_bytes_per_output: null },
}

function tenancy(): Tenancy {
  return {
    limiter: new MemoryTenantLimiter(),
    defaults: {},
    overrides: (tenant) => OVERRIDES[tenant],
    slotTtlMs: 60_000,
    reservationTtlMs: 60_000,
    defaultOutputTokens: 1000,
    clock: systemClock,
  }
}

const text = (bytes: number, tag: string) => `${tag} `.padEnd(bytes, 'x')

async function refusal(run: Promise<unknown>) {
  const error = await run.then(() => undefined).catch((e: unknown) => e)
  if (!isTurnlineError(error, 'payload_too_large')) throw new Error(`expected a 413: ${error}`)
  return error.details
}

let engine: ReturnType<typeof startScriptedEngine> | undefined
afterEach(() => engine?.close())

describe("a tenant's caps on kept output", () => {
  it('are read from the registry: a number is a cap, null or absent none', () => {
    const t = tenancy()
    expect(limitsOf(t, 'small')).toEqual({ outputBytesPerOutput: 150_000 })
    expect(limitsOf(t, 'tight')).toEqual({ outputBytesPerSession: 250_000 })
    expect(limitsOf(t, 'lifted')).toEqual({})
    expect(tenantAdmission(t).outputCaps?.('small')).toEqual({ perOutput: 150_000 })
    expect(tenantAdmission(t).outputCaps?.('other')).toEqual({})
  })

  it('refuse a text over the lower cap, naming the tenant limit; the deployment cap still holds for others', async () => {
    engine = startScriptedEngine({ admission: tenantAdmission(tenancy()) })
    const { service, model } = engine
    const small = await service.createSession('small', {})
    const refused = await refusal(
      service.stepTurn('small', small.session_id, { input: text(200_000, 'big') }),
    )
    expect(refused).toMatchObject({ limit: 'output_bytes_per_output', max_bytes: 150_000 })
    const follow = await refusal(
      service.enqueueIntent('small', small.session_id, { text: text(200_000, 'steer') }),
    )
    expect(follow).toMatchObject({ limit: 'output_bytes_per_output' })

    // Another tenant: the deployment's caps (64 MiB) only.
    const other = await service.createSession('other', {})
    model.enqueue({ text: 'read' })
    const turn = await service.stepTurn('other', other.session_id, { input: text(200_000, 'big') })
    expect(turn.status).toBe('completed')
  })

  it("refuse what would pass the tenant's cap on a session's total", async () => {
    engine = startScriptedEngine({ admission: tenantAdmission(tenancy()) })
    const { service, model } = engine
    const { session_id } = await service.createSession('tight', {})
    model.enqueue({ text: 'one' })
    const first = await service.stepTurn('tight', session_id, { input: text(200_000, 'first') })
    expect(first.status).toBe('completed')
    const refused = await refusal(
      service.stepTurn('tight', session_id, { input: text(200_000, 'second') }),
    )
    expect(refused).toMatchObject({ limit: 'output_bytes_per_session', max_bytes: 250_000 })
  })
})
