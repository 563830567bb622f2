#!/usr/bin/env node
// The `turnline` command (package.json "bin"), by the same rule as `npm start` (infra/start.mjs):
// the TypeScript sources through tsx when the dev dependencies are installed (a clone after
// `npm ci`: edits take effect at once), otherwise the compiled CLI (`npm run build` writes
// dist/cli/main.mjs). Plain JavaScript, so that `npx turnline` works with nothing but node.
import { existsSync } from 'node:fs'

const SOURCES = new URL('./main.ts', import.meta.url)
const COMPILED = new URL('../dist/cli/main.mjs', import.meta.url)

async function tsxApi() {
  try {
    return await import('tsx/esm/api')
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND') return null
    throw error
  }
}

const tsx = await tsxApi()
if (tsx) {
  tsx.register()
  await import(SOURCES.href)
} else if (existsSync(COMPILED)) {
  process.setSourceMapsEnabled?.(true)
  await import(COMPILED.href)
} else {
  process.stderr.write(
    'turnline: cannot start: the dev dependencies (tsx) are not installed and there is no build ' +
      'in dist/cli/; run `npm ci` (development) or `npm run build` (production)\n',
  )
  process.exit(7)
}
