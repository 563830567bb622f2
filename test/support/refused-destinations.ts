/**
 * Callback destinations the egress rules refuse in multi-tenant mode, and what the refusal
 * says: loopback (also IPv4-mapped), cloud metadata, private, unique-local and CGNAT addresses,
 * and `rebound.example`, which the test DNS (dns-server.ts) must resolve to 127.0.0.1. `port`
 * is a loopback receiver's, which must never be called.
 */
export function refusedCallbackDestinations(port: number): Record<string, RegExp> {
  return {
    [`http://127.0.0.1:${port}/hook`]: /127\.0\.0\.1 is a loopback address/,
    [`http://[::ffff:127.0.0.1]:${port}/hook`]: /loopback/,
    'http://169.254.169.254/latest/meta-data': /link-local/,
    'http://10.1.2.3/hook': /private/,
    'http://192.168.0.10/hook': /private/,
    'http://[fd00::1]/hook': /unique local/,
    'http://100.64.0.1/hook': /carrier-grade NAT/,
    [`http://rebound.example:${port}/hook`]:
      /rebound\.example resolves to 127\.0\.0\.1, a loopback/,
  }
}
