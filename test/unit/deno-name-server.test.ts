import { describe, expect, it } from 'vitest'
import { denoNameServer } from '../../adapters/egress/deno-egress-host.ts'

/** TURNLINE_EGRESS_DNS entries as `Deno.resolveDns` takes a name server. */
describe('denoNameServer', () => {
  it('reads every form the setting accepts, port 53 by default', () => {
    expect(denoNameServer('1.1.1.1')).toEqual({ ipAddr: '1.1.1.1', port: 53 })
    expect(denoNameServer('127.0.0.1:5353')).toEqual({ ipAddr: '127.0.0.1', port: 5353 })
    expect(denoNameServer('2606:4700:4700::1111')).toEqual({
      ipAddr: '2606:4700:4700::1111',
      port: 53,
    })
    expect(denoNameServer('[::1]:5353')).toEqual({ ipAddr: '::1', port: 5353 })
    expect(denoNameServer('[::1]')).toEqual({ ipAddr: '::1', port: 53 })
  })
})
