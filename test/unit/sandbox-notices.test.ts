import { describe, expect, it } from 'vitest'
import type { SandboxStatus } from '../../adapters/runner/command-sandbox.ts'
import { DEFAULT_SANDBOX_SETTINGS } from '../../adapters/runner/sandbox-settings.ts'
import { egressNotes, sandboxNotes } from '../../functions/sandbox-notices.ts'

/**
 * What `npm start` says of its runner's sandbox at start, and of its commands' network once the
 * runner's egress probe has ended (functions/sandbox-notices.ts; printed later by entry-app.ts).
 */
const bwrap = (network: 'off' | 'session' | 'on'): SandboxStatus => ({
  isolation: 'bwrap',
  bwrap: '/usr/bin/bwrap',
  version: '0.8.0',
  uid: 65534,
  gid: 65534,
  network,
  limits: DEFAULT_SANDBOX_SETTINGS.limits,
  tmpfs: null,
  seccomp: 'x86_64',
  warnings: [],
})

describe('the start notes of the embedded runner', () => {
  it('say the sandbox at start, without the egress probe it may not have ended', () => {
    const notices: string[] = []
    const warnings: string[] = []
    sandboxNotes(bwrap('session'), notices, warnings)
    expect(notices).toHaveLength(1)
    expect(notices[0]).toMatch(/bubblewrap 0\.8\.0 as uid 65534, network only for sessions/)
    expect(notices[0]).not.toMatch(/egress/)
    expect(warnings).toEqual([])
  })

  it('say how commands allowed the network reach it once the probe ended, or warn they get none', () => {
    expect(egressNotes(bwrap('session'), { mode: 'proxy' })).toEqual({
      notices: [
        'sandbox: commands allowed the network reach it through the egress proxy (the public internet only)',
      ],
      warnings: [],
    })
    const none = egressNotes(bwrap('on'), { mode: 'none', reason: 'socat is not installed' })
    expect(none.notices).toEqual([])
    expect(none.warnings[0]).toMatch(/allowed the network get NONE: socat is not installed/)
  })

  it('say nothing of a network commands never get', () => {
    const nothing = { notices: [], warnings: [] }
    const off = { mode: 'none' as const, reason: 'TURNLINE_SANDBOX_NETWORK=off' }
    expect(egressNotes(bwrap('off'), off)).toEqual(nothing)
    const unsandboxed: SandboxStatus = { isolation: 'none', reason: 'off', uid: 0, limits: null }
    expect(egressNotes(unsandboxed, { mode: 'none', reason: 'not sandboxed' })).toEqual(nothing)
  })
})
