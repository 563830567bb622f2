import { describe, expect, it } from 'vitest'
import { earlyEmbeddedRunnerRequest } from '../../functions/embedded-runner-request.ts'

/** What a server asks of its embedded runner: a single-tenant one, its tenant set up ahead. */
const requestOf = (env: Record<string, string>) =>
  earlyEmbeddedRunnerRequest(
    { PATH: '/usr/bin:/bin', TURNLINE_DATA_DIR: '/srv/turnline', ...env },
    { fsStoreByDefault: true },
  )

describe('the embedded runner request', () => {
  it('asks a single-tenant server\'s runner to set up the tenant "local" ahead', () => {
    expect(requestOf({})?.prepareTenants).toEqual(['local'])
  })

  it('asks for no tenant ahead with several tenants', () => {
    const request = requestOf({ TURNLINE_API_KEYS: 'acme-key-0123456789abcdef=acme' })
    expect(request?.multiTenant).toBe(true)
    expect(request?.prepareTenants).toEqual([])
  })
})
