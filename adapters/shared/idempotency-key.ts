/**
 * The key a coordinator keeps a tenant's idempotency record under (memory and Redis alike);
 * the tenant is escaped so `a:b`+`c` never meets `a`+`b:c`.
 */
export function idempotencyKey(tenant: string, key: string): string {
  return `${encodeURIComponent(tenant)}:${key}`
}
