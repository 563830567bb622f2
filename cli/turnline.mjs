#!/usr/bin/env node
// The `turnline` command (package.json "bin"). It runs the compiled CLI when the package has been
// built (COMPILED below), otherwise the TypeScript sources through tsx, which a clone has after
// `npm ci`. Plain JavaScript, so that `npx turnline` works with nothing but node.
import { existsSync } from 'node:fs'

const COMPILED = new URL('../dist/cli/main.js', import.meta.url)
const SOURCES = new URL('./main.ts', import.meta.url)

if (existsSync(COMPILED)) {
  await import(COMPILED.href)
} else {
  let tsx
  try {
    tsx = await import('tsx/esm/api')
  } catch {
    process.stderr.write(
      'turnline: cannot start: there is no compiled build (dist/cli/main.js) and no tsx to run ' +
        'the TypeScript sources; run `npm ci` in the clone first\n',
    )
    process.exit(7)
  }
  tsx.register()
  await import(SOURCES.href)
}
