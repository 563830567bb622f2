// `npm test`: builds (once) and starts the real local services, then runs tsc, biome and vitest
// (all projects) against them, and always stops the services again.
//
//   npm test                      everything
//   npm test -- test/unit         extra arguments go to `vitest run`
//
// Tests find the services through TURNLINE_TEST_S3_ENDPOINT, TURNLINE_TEST_S3_REGION,
// TURNLINE_TEST_S3_ACCESS_KEY_ID, TURNLINE_TEST_S3_SECRET_ACCESS_KEY and TURNLINE_TEST_REDIS_URL.
// Exit code: that of the first failing step (1 when the services cannot start, 130 on Ctrl-C).
import { spawn } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import {
  repoRoot,
  startServices,
  stopServices,
  stopStaleServices,
  testEnv,
  tmpDir,
} from './services.mjs'

const bin = (name) => path.join(repoRoot, 'node_modules', '.bin', name)
const stateFile = path.join(tmpDir, `test-services-${process.pid}.json`)
const reportFile = path.join(tmpDir, `vitest-report-${process.pid}.json`)
const vitestArgs = process.argv.slice(2)

let current = null // the step's child process, while one runs
let starting = null // the services' start, once begun
let stopping = null // the shutdown, once begun

function header(text) {
  console.log(`\n━━ ${text} ${'━'.repeat(Math.max(4, 72 - text.length))}`)
}

function run(command, args, env = process.env) {
  return new Promise((resolve) => {
    current = spawn(command, args, { cwd: repoRoot, env, stdio: 'inherit' })
    current.on('error', (error) => {
      console.error(`error: cannot run ${command}: ${error.message}`)
      resolve(127)
    })
    current.on('exit', (code, signal) => {
      current = null
      resolve(code ?? (signal === 'SIGINT' ? 130 : 1))
    })
  })
}

/** Stops the services once; every caller waits for the same stop. */
function shutdown() {
  stopping ??= (async () => {
    // A signal during the start waits for it, so that nothing started is left running.
    if (!(await starting?.catch(() => null))) return
    const stopped = await stopServices(stateFile)
    console.log(stopped.length ? `stopped ${stopped.join(', ')}` : 'services already stopped')
  })()
  return stopping
}

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
]) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping`)
    current?.kill(signal)
    shutdown().finally(() => process.exit(code))
  })
}

function vitestSummary() {
  if (!existsSync(reportFile)) return null
  try {
    const report = JSON.parse(readFileSync(reportFile, 'utf8'))
    // A file that fails to load fails no test, yet it is a failure: count it as one.
    const broken = report.testResults.filter(
      (file) =>
        file.status === 'failed' && !file.assertionResults.some((t) => t.status === 'failed'),
    ).length
    const skipped = report.numPendingTests + report.numTodoTests
    const tail = skipped > 0 ? `, ${skipped} skipped` : ''
    if (broken > 0) console.log(`vitest: ${broken} test file(s) failed outside any test`)
    return `${report.numPassedTests} passed, ${report.numFailedTests + broken} failed${tail}`
  } catch {
    return null
  } finally {
    rmSync(reportFile, { force: true })
  }
}

async function main() {
  header('local services')
  if (
    (await run('bash', [
      path.join(repoRoot, 'infra/local/ensure-packages.sh'),
      'redis-server',
      'bubblewrap',
      // the relay of commands allowed the network (docs/runner-protocol.md), and the egress tests' client
      'socat',
      'curl',
      'jq',
      // the timeline viewer's browser tests (test/integration/viewer-*.test.ts)
      'chromium',
      'fonts-dejavu-core',
    ])) !== 0
  ) {
    return 1
  }
  if ((await run('bash', [path.join(repoRoot, 'infra/local/setup-moto.sh')])) !== 0) {
    console.error('error: the moto_server root could not be built (see above)')
    return 1
  }
  const stale = await stopStaleServices()
  if (stale.length > 0) console.log(`stopped services left by an earlier run: ${stale.join(', ')}`)
  let services
  try {
    starting = startServices({ stateFile, owner: process.pid })
    services = await starting
  } catch (error) {
    console.error(`error: ${error.message}`)
    return 1
  }
  console.log(`S3 (moto_server)  ${services.s3.endpoint}`)
  console.log(`redis-server      ${services.redis.url}`)
  const env = { ...process.env, ...testEnv(services) }

  const ownReporter = vitestArgs.some((arg) => arg.startsWith('--reporter'))
  const reporterArgs = ownReporter
    ? []
    : ['--reporter=default', '--reporter=json', `--outputFile.json=${reportFile}`]
  const steps = [
    ['tsc --noEmit', bin('tsc'), ['--noEmit', '-p', '.']],
    ['biome check .', bin('biome'), ['check', '.']],
    ['vitest run', bin('vitest'), ['run', ...reporterArgs, ...vitestArgs]],
  ]
  const results = []
  for (const [name, command, args] of steps) {
    if (stopping) break
    header(name)
    results.push([name, await run(command, args, env)])
  }

  header('summary')
  for (const [name, code] of results) {
    console.log(`${name.padEnd(16)} ${code === 0 ? 'ok' : `FAILED (exit ${code})`}`)
  }
  const counts = ownReporter ? null : vitestSummary()
  if (counts) console.log(`vitest: ${counts}`)
  return results.find(([, code]) => code !== 0)?.[1] ?? 0
}

let exitCode = 1
try {
  exitCode = await main()
} catch (error) {
  console.error(`error: ${error.stack ?? error}`)
} finally {
  await shutdown()
}
process.exit(exitCode)
