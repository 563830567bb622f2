import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ReferenceScript } from '../openapi/docs-page.ts'

/**
 * The API reference renderer's bundle on Node: `reference/scalar.js` beside the built server
 * (`npm run build` copies it into dist/node, and build:lambda into dist/lambda, so a production
 * install needs no dev dependency), else `dist/browser/standalone.js` of `@scalar/api-reference`
 * in node_modules (a clone). Read once, on first use. Undefined when neither exists: the page then
 * loads it from the CDN.
 */
export function referenceScriptFile(): ReferenceScript | undefined {
  const path = located()
  if (path === undefined) return undefined
  let bytes: Promise<Uint8Array<ArrayBuffer>> | undefined
  return () => {
    bytes ??= readFile(path).catch((error: unknown) => {
      bytes = undefined
      throw error
    })
    return bytes
  }
}

/**
 * The entries' `referenceScript` option: the bundle where there is one, else nothing (the page
 * then loads it from the pinned CDN) — also where the runtime may not read files (Deno without
 * --allow-read).
 */
export function referenceScriptOption(): { referenceScript?: ReferenceScript } {
  try {
    const script = referenceScriptFile()
    return script ? { referenceScript: script } : {}
  } catch {
    return {}
  }
}

function located(): string | undefined {
  // Beside this code, or beside the chunks' folder (the Lambda bundle's chunks/).
  for (const place of ['./reference/scalar.js', '../reference/scalar.js']) {
    const beside = fileURLToPath(new URL(place, import.meta.url))
    if (existsSync(beside)) return beside
  }
  try {
    // The package's main module is dist/index.js; its browser bundle sits in dist/browser.
    const main = createRequire(import.meta.url).resolve('@scalar/api-reference')
    const bundle = join(dirname(main), 'browser', 'standalone.js')
    return existsSync(bundle) ? bundle : undefined
  } catch {
    return undefined
  }
}
