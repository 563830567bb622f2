// `npm start`'s TypeScript transform, on Node versions with in-thread module hooks
// (`module.registerHooks`, Node ≥ 22.15): the repository's own .ts files are transpiled with
// esbuild as tsx does, but without `keepNames`. tsx wraps every named function and class in
// `__name(fn, "fn")` (an Object.defineProperty call each time a closure is created): ≈ 0.5 ms of
// server CPU a steady turn that the build (one esbuild bundle, no keepNames) does not spend
// (docs/performance.md, `npm start` against the build). Names stay as written:
// a transform of one file renames nothing. tsx stays registered beneath: it still resolves every
// import and loads everything else (packages, JSON). Stack traces map to the sources (inline
// source maps; tsx turned source maps on).
//
// Each transform is kept under node_modules/.cache/turnline-start/, keyed by the file's path and
// content, esbuild's version and the options (as tsx keeps its own), so a start after the first
// transpiles only what changed. Plain Node ESM: it runs before anything is built.
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import nodeModule from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/**
 * Registers the transform for the .ts files under `root` outside node_modules; false (nothing
 * registered, tsx transforms everything) where Node has no `module.registerHooks` or esbuild is
 * not installed.
 */
export async function registerSourceTransform(root) {
  if (typeof nodeModule.registerHooks !== 'function') return false
  const esbuild = await import('esbuild').catch(() => null)
  if (esbuild === null) return false
  const rootURL = pathToFileURL(path.resolve(root) + path.sep).href
  const cache = path.join(root, 'node_modules', '.cache', 'turnline-start')
  const options = {
    loader: 'ts',
    format: 'esm',
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    sourcesContent: false,
    tsconfigRaw: tsconfigOf(root),
  }
  const optionsKey = `${esbuild.version}\n${JSON.stringify(options)}`
  nodeModule.registerHooks({
    load(url, context, nextLoad) {
      const plain = url.split(/[?#]/, 1)[0] ?? url
      if (
        !plain.startsWith(rootURL) ||
        !plain.endsWith('.ts') ||
        plain.includes('/node_modules/')
      ) {
        return nextLoad(url, context)
      }
      const file = fileURLToPath(plain)
      const source = readFileSync(file, 'utf8')
      const key = createHash('sha256').update(`${optionsKey}\n${file}\n${source}`).digest('hex')
      const kept = path.join(cache, `${key}.mjs`)
      let code
      try {
        code = readFileSync(kept, 'utf8')
      } catch {
        code = esbuild.transformSync(source, { ...options, sourcefile: file }).code
        keep(cache, kept, code)
      }
      return { format: 'module', source: code, shortCircuit: true }
    },
  })
  return true
}

/** The compiler options esbuild honours in a transform, from the repository's tsconfig.json. */
function tsconfigOf(root) {
  const { compilerOptions = {} } = JSON.parse(
    readFileSync(path.join(root, 'tsconfig.json'), 'utf8'),
  )
  return { compilerOptions }
}

/** Writes a transform to the cache (temp file, then rename); a cache that cannot be written is skipped. */
function keep(cache, file, code) {
  try {
    mkdirSync(cache, { recursive: true })
    const temp = `${file}.${process.pid}.tmp`
    writeFileSync(temp, code)
    renameSync(temp, file)
  } catch {
    // Read-only or full: the next start transpiles again.
  }
}
