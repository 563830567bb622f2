/** What one hop of a request is: fetch's arguments, normalised. */
export interface Hop {
  url: URL
  method: string
  headers: Record<string, string>
  /** A string goes out as UTF-8. */
  body: Buffer | string | undefined
}

const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308])
/** Headers fetch drops when a redirect leaves the origin. */
const CROSS_ORIGIN_DROPPED = ['authorization', 'cookie', 'proxy-authorization', 'host']
const BODY_HEADERS = [
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'content-location',
]

/**
 * The hop a redirect answer leads to, as fetch's `redirect: 'follow'` takes it, or undefined
 * when the answer is not a redirect (no Location, or not 301/302/303/307/308). 303, and 301 or
 * 302 after a POST, continue as a GET without the body; 307 and 308 repeat the method and the
 * body. Leaving the origin drops the credentials' headers. A Location that is not http(s) is a
 * transport failure, as in fetch.
 */
export function nextRedirect(
  hop: Hop,
  status: number,
  location: string | undefined,
): Hop | undefined {
  if (!REDIRECT_STATUS.has(status) || location === undefined) return undefined
  const url = new URL(location, hop.url)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError('fetch failed', { cause: new Error(`redirect to ${url.protocol}`) })
  }
  const headers = { ...hop.headers }
  if (url.origin !== hop.url.origin) {
    for (const name of CROSS_ORIGIN_DROPPED) delete headers[name]
  }
  const toGet =
    (status === 303 && hop.method !== 'GET' && hop.method !== 'HEAD') ||
    ((status === 301 || status === 302) && hop.method === 'POST')
  if (!toGet) return { ...hop, url, headers }
  for (const name of BODY_HEADERS) delete headers[name]
  return { url, method: 'GET', headers, body: undefined }
}
