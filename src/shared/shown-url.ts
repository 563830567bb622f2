/**
 * A URL as a notice or a log line shows it: scheme, host and path, and the names of its query
 * parameters with `…` for their values; never `user:password@`. A collector's or gateway's URL
 * may carry its credentials (`?api_key=…`) and operator logs travel further than the
 * environment does.
 */
export function shownUrl(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return '(not a URL)'
  }
  const names = [...new Set(parsed.searchParams.keys())]
  const query = names.length > 0 ? `?${names.map((name) => `${name}=…`).join('&')}` : ''
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}${query}`
}
