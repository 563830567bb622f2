// Checks the container files without Docker (CI has no Docker daemon and no image registry):
//
//   - the Dockerfile parses and lints clean (dockerfile-utils, the VS Code Dockerfile validator);
//   - every path its build stage COPYs from the context is let in by .dockerignore and exists;
//   - every file its runtime stages start (CMD) is one the build writes to dist/node;
//   - docker-compose.yml resolves (`docker-compose config`, Debian's docker-compose) with the
//     example environment, and every service that runs the image runs a built file.
//
//   node infra/build/check-container-files.mjs     (after `npm run build`)
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { validate } from 'dockerfile-utils'

const root = fileURLToPath(new URL('../../', import.meta.url))
const read = (file) => readFileSync(path.join(root, file), 'utf8')
const problems = []

const dockerfile = read('Dockerfile')
for (const p of validate(dockerfile)) {
  problems.push(`Dockerfile:${p.range.start.line + 1}: ${p.message}`)
}

const allowed = read('.dockerignore')
  .split('\n')
  .filter((line) => line.startsWith('!'))
  .map((line) => line.slice(1).replace(/\/$/, ''))
const instructions = dockerfile.replace(/\\\n/g, ' ').split('\n')
for (const line of instructions) {
  const copy = /^COPY\s+(?!--from)(.+)$/.exec(line.trim())
  if (!copy) continue
  const parts = copy[1].split(/\s+/).filter((p) => !p.startsWith('--'))
  for (const source of parts.slice(0, -1)) {
    const clean = source.replace(/\/$/, '')
    if (!allowed.some((a) => clean === a || clean.startsWith(`${a}/`))) {
      problems.push(`Dockerfile copies ${source}, which .dockerignore keeps out of the context`)
    }
    if (!existsSync(path.join(root, clean))) problems.push(`Dockerfile copies ${source}: missing`)
  }
}

const started = [...dockerfile.matchAll(/CMD \[[^\]]*"(dist\/node\/[^"]+)"\]/g)].map((m) => m[1])
const compose = read('docker-compose.yml')
started.push(...[...compose.matchAll(/"(dist\/node\/[^"]+)"/g)].map((m) => m[1]))
if (started.length < 3)
  problems.push(`expected server, runner and check commands, found ${started}`)
for (const file of new Set(started)) {
  if (!existsSync(path.join(root, file))) {
    problems.push(`${file} is started by the container files but not built (npm run build)`)
  }
}

try {
  execFileSync(
    'docker-compose',
    [
      '--env-file',
      'infra/deploy/docker/compose.env.example',
      '-f',
      'docker-compose.yml',
      'config',
      '--quiet',
    ],
    { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] },
  )
} catch (error) {
  problems.push(
    error.code === 'ENOENT'
      ? 'docker-compose not found (apt-get install docker-compose) to check docker-compose.yml'
      : `docker-compose config: ${error.stderr?.toString().trim()}`,
  )
}

if (problems.length > 0) {
  console.error(`container files: ${problems.length} problem(s)\n  - ${problems.join('\n  - ')}`)
  process.exit(1)
}
console.log(
  `container files: Dockerfile lints clean, its COPYs are in the context, ${new Set(started).size} ` +
    'started files are built, docker-compose.yml resolves',
)
