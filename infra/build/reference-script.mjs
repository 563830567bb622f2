// The API reference renderer's browser bundle (@scalar/api-reference's dist/browser/standalone.js),
// copied where each runtime serves /docs/scalar.js from: beside the Node and Lambda builds
// (build.mjs), and into the Worker's static assets (worker-build.mjs).
import { copyFileSync, mkdirSync, renameSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../', import.meta.url))

/**
 * Copies the bundle to `target` (a file path), making its folder. Several `wrangler dev` may
 * run this at once (the tests): a copy already there of the same size (the file of a pinned
 * version) is kept, and a new one is written beside it and renamed over, so no reader ever
 * sees half a file.
 */
export function copyReferenceScript(target) {
  const main = createRequire(path.join(root, 'package.json')).resolve('@scalar/api-reference')
  const bundle = path.join(path.dirname(main), 'browser', 'standalone.js')
  if (statSync(target, { throwIfNoEntry: false })?.size === statSync(bundle).size) return
  mkdirSync(path.dirname(target), { recursive: true })
  const partial = `${target}.${process.pid}.partial`
  copyFileSync(bundle, partial)
  renameSync(partial, target)
}
