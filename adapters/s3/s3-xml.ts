/**
 * The two XML documents the S3 client reads: a ListObjectsV2 page (`ListBucketResult`) and an
 * error (`Error`). S3's answers are flat and machine-written; the elements read here never nest
 * in themselves, so each is found by its tags and its text unescaped (the five XML entities and
 * numeric references).
 */

export interface ListResult {
  contents: { key: string; size: number }[]
  commonPrefixes: string[]
  isTruncated: boolean
  nextContinuationToken: string | undefined
}

export interface ErrorDocument {
  code: string | undefined
  message: string | undefined
}

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
}

export function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);/g, (whole, name: string) => {
    if (name.startsWith('#x')) return String.fromCodePoint(Number.parseInt(name.slice(2), 16))
    if (name.startsWith('#')) return String.fromCodePoint(Number.parseInt(name.slice(1), 10))
    return ENTITIES[name] ?? whole
  })
}

/** Every `<tag>…</tag>` directly in `xml`, as its raw inner text. */
function elements(xml: string, tag: string): string[] {
  const found: string[] = []
  const open = `<${tag}>`
  const close = `</${tag}>`
  for (let at = xml.indexOf(open); at >= 0; at = xml.indexOf(open, at)) {
    const end = xml.indexOf(close, at + open.length)
    if (end < 0) break
    found.push(xml.slice(at + open.length, end))
    at = end + close.length
  }
  return found
}

function text(xml: string, tag: string): string | undefined {
  const inner = elements(xml, tag)[0]
  return inner === undefined ? undefined : unescapeXml(inner)
}

/** A ListObjectsV2 page; throws when the document is not one. */
export function parseListResult(xml: string): ListResult {
  if (!xml.includes('<ListBucketResult')) throw new Error('not a ListBucketResult')
  const contents = elements(xml, 'Contents').map((item) => {
    const key = text(item, 'Key')
    const size = Number(text(item, 'Size') ?? '0')
    if (key === undefined || !Number.isSafeInteger(size)) throw new Error('a Contents entry')
    return { key, size }
  })
  const commonPrefixes = elements(xml, 'CommonPrefixes').flatMap((item) => {
    const prefix = text(item, 'Prefix')
    return prefix === undefined ? [] : [prefix]
  })
  return {
    contents,
    commonPrefixes,
    isTruncated: text(xml, 'IsTruncated') === 'true',
    nextContinuationToken: text(xml, 'NextContinuationToken'),
  }
}

/** S3's `<Error><Code>…</Code><Message>…</Message></Error>`, as far as the body has one. */
export function parseErrorDocument(xml: string): ErrorDocument {
  return { code: text(xml, 'Code'), message: text(xml, 'Message') }
}
