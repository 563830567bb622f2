/**
 * The operator's host lists (`TURNLINE_TOOL_ALLOWED_HOSTS`): an entry is a host or host:port,
 * lowercase; `*` lets tenants pick any host (and then every address is checked when the call
 * connects: docs/tools.md, "Where tenant-directed calls may go").
 */

/** Whether `url`'s host or host:port is on the list itself — a wildcard does not count. */
export function hostNamed(hosts: readonly string[], url: URL): boolean {
  const host = url.host.toLowerCase()
  const hostname = url.hostname.toLowerCase()
  return hosts.some((h) => h === host || h === hostname)
}

/** Whether `url` may be called: its host is named, or the list has `*`. */
export function hostListed(hosts: readonly string[], url: URL): boolean {
  return hosts.includes('*') || hostNamed(hosts, url)
}
