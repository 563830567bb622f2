// Real local services for development and tests: moto_server (S3 with conditional writes, run from
// the chroot that setup-moto.sh builds; the same endpoint serves SQS, which the Lambda background
// tests use) and redis-server, each on a free loopback port.
//
//   node infra/local/services.mjs start    start both, write .tmp/services.json, leave them running
//                                          (moto notes each request in .tmp/moto-requests.log)
//   node infra/local/services.mjs stop     stop the services recorded in .tmp/services.json
//   node infra/local/services.mjs status   print .tmp/services.json if its services are running
//   node infra/local/services.mjs env      print `export TURNLINE_TEST_…=…` lines for a shell
//
// Plain Node ESM (no TypeScript) so that it runs before anything is built.
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  findExecutable,
  httpAnswers,
  isAlive,
  killGroup,
  redisPongs,
  runs,
  SYSTEM_PATH,
  startProcess,
} from './processes.mjs'

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
export const tmpDir = path.join(repoRoot, '.tmp')
export const devStateFile = path.join(tmpDir, 'services.json')
export const motoRoot = process.env.TURNLINE_MOTO_ROOT || '/var/cache/turnline/moto-root'
const S3_DEFAULTS = { region: 'us-east-1', accessKeyId: 'test', secretAccessKey: 'test' }
/**
 * The text moto_server is launched with: its per-request costs that are not S3's cut
 * (moto-server-lean.py, moto-server-requests.py), then its conditional writes made atomic
 * (moto-server-atomic.py, which runs the server).
 */
const MOTO_LAUNCHER = ['moto-server-lean.py', 'moto-server-requests.py', 'moto-server-atomic.py']
  .map((file) => readFileSync(fileURLToPath(new URL(`./${file}`, import.meta.url)), 'utf8'))
  .join('\n')
const MOTO_LAUNCH = "import os; exec(os.environ['TURNLINE_MOTO_LAUNCHER'])"
/** What each recorded pid must be running before we signal it (guards against pid reuse). */
const COMMAND_MARK = { moto: 'moto_server', redis: 'redis-server' }

/** Checks that both services can start at all, before starting either. */
function preflight() {
  const problems = []
  const redis = findExecutable('redis-server')
  if (!redis) {
    problems.push('redis-server not found: install it with `apt-get install -y redis-server`')
  }
  const chroot = findExecutable('chroot')
  if (!existsSync(path.join(motoRoot, '.turnline-moto-ready'))) {
    problems.push(
      `moto_server root not built at ${motoRoot}: run \`bash infra/local/setup-moto.sh\` as root` +
        ' (or set TURNLINE_MOTO_ROOT to an existing one)',
    )
  } else if (process.getuid?.() !== 0 || !chroot) {
    problems.push('moto_server runs in a chroot, which needs root: run this as root')
  }
  if (problems.length > 0) {
    throw new Error(`cannot start the local services:\n  - ${problems.join('\n  - ')}`)
  }
  return { redis, chroot }
}

/**
 * Starts moto_server and redis-server, waits until both answer, records them in `stateFile`
 * and returns their coordinates. Throws (after stopping whatever did start) when either fails.
 * `owner` is the pid whose exit makes the services stale (null: they outlive their starter).
 */
export async function startServices({
  stateFile = devStateFile,
  owner = null,
  requestLog = null,
} = {}) {
  const bin = preflight()
  const logDir = path.join(tmpDir, 'logs')
  mkdirSync(logDir, { recursive: true })
  // moto notes each request in `requestLog` when given (moto-server-lean.py): fd 3 of its process.
  if (requestLog) rmSync(requestLog, { force: true })
  const requestLogFd = requestLog ? openSync(requestLog, 'a') : null
  const tag = path.basename(stateFile, '.json')
  const logs = {
    moto: path.join(logDir, `${tag}-moto.log`),
    redis: path.join(logDir, `${tag}-redis.log`),
  }
  const started = await Promise.allSettled([
    startProcess({
      name: 'moto_server',
      command: bin.chroot,
      // Lean and with conditional writes made atomic (see MOTO_LAUNCHER); `moto_server` stays in
      // the command line, which is how a recorded pid is recognised as ours.
      args: (port) => [
        ...[motoRoot, 'python3', '-c', MOTO_LAUNCH, 'moto_server'],
        ...['-H', '127.0.0.1', '-p', String(port)],
      ],
      env: {
        ...{ PATH: SYSTEM_PATH, HOME: '/root', LC_ALL: 'C.UTF-8', PYTHONUNBUFFERED: '1' },
        TURNLINE_MOTO_LAUNCHER: MOTO_LAUNCHER,
        ...(requestLogFd === null ? {} : { TURNLINE_MOTO_REQUEST_LOG_FD: '3' }),
      },
      extraFds: requestLogFd === null ? [] : [requestLogFd],
      probe: httpAnswers,
      timeoutMs: 30_000,
      logFile: logs.moto,
    }),
    startProcess({
      name: 'redis-server',
      command: bin.redis,
      // No persistence, no daemon: the process is ours to stop, and nothing outlives it.
      args: (port) => [
        ...['--bind', '127.0.0.1', '--port', String(port)],
        ...['--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', tmpdir()],
      ],
      env: process.env,
      probe: redisPongs,
      timeoutMs: 15_000,
      logFile: logs.redis,
    }),
  ])
  if (requestLogFd !== null) closeSync(requestLogFd)
  const [moto, redis] = started
  if (moto.status === 'rejected' || redis.status === 'rejected') {
    for (const s of started) if (s.status === 'fulfilled') await killGroup(s.value.pid)
    const reasons = started.filter((s) => s.status === 'rejected').map((s) => s.reason.message)
    throw new Error(reasons.join('\n'))
  }
  const info = {
    s3: {
      endpoint: `http://127.0.0.1:${moto.value.port}`,
      ...S3_DEFAULTS,
      ...(requestLog ? { requestLog } : {}),
    },
    redis: { url: `redis://127.0.0.1:${redis.value.port}` },
    pids: { moto: moto.value.pid, redis: redis.value.pid },
    owner,
    logs: requestLog ? { ...logs, motoRequests: requestLog } : logs,
  }
  writeFileSync(stateFile, `${JSON.stringify(info, null, 2)}\n`)
  return info
}

function readState(stateFile) {
  try {
    return JSON.parse(readFileSync(stateFile, 'utf8'))
  } catch {
    return null
  }
}

/** True when every recorded service process is still the one we started. */
export function servicesRunning(info) {
  const pids = Object.entries(info?.pids ?? {})
  return (
    pids.length > 0 && pids.every(([name, pid]) => isAlive(pid) && runs(pid, COMMAND_MARK[name]))
  )
}

/** Stops the services recorded in `stateFile`, removes it and their logs. Returns the names stopped. */
export async function stopServices(stateFile = devStateFile) {
  const info = readState(stateFile)
  const stopped = []
  for (const [name, pid] of Object.entries(info?.pids ?? {})) {
    if (!isAlive(pid) || !runs(pid, COMMAND_MARK[name] ?? '\0')) continue
    await killGroup(pid)
    stopped.push(name)
  }
  for (const log of Object.values(info?.logs ?? {})) rmSync(log, { force: true })
  rmSync(stateFile, { force: true })
  return stopped
}

/** Stops services left behind by test runs whose owner process is gone (e.g. killed -9). */
export async function stopStaleServices() {
  if (!existsSync(tmpDir)) return []
  const stopped = []
  for (const file of readdirSync(tmpDir).filter((f) => /^test-services-\d+\.json$/.test(f))) {
    const info = readState(path.join(tmpDir, file))
    if (info?.owner && isAlive(info.owner)) continue
    stopped.push(...(await stopServices(path.join(tmpDir, file))))
  }
  return stopped
}

/** The environment variables through which tests find the services. */
export function testEnv(info) {
  return {
    TURNLINE_TEST_S3_ENDPOINT: info.s3.endpoint,
    TURNLINE_TEST_S3_REGION: info.s3.region,
    TURNLINE_TEST_S3_ACCESS_KEY_ID: info.s3.accessKeyId,
    TURNLINE_TEST_S3_SECRET_ACCESS_KEY: info.s3.secretAccessKey,
    TURNLINE_TEST_REDIS_URL: info.redis.url,
  }
}

async function cli(command) {
  const current = readState(devStateFile)
  switch (command) {
    case 'start': {
      if (servicesRunning(current)) {
        console.log(`services already running (${devStateFile}):`)
        console.log(JSON.stringify(current, null, 2))
        return
      }
      await stopServices(devStateFile)
      // Each moto request noted for the benches that count a turn's S3 requests (store-peers.ts).
      const info = await startServices({ requestLog: path.join(tmpDir, 'moto-requests.log') })
      console.log(`S3 (moto_server)  ${info.s3.endpoint}  pid ${info.pids.moto}`)
      console.log(`redis-server      ${info.redis.url}  pid ${info.pids.redis}`)
      console.log(
        `written ${path.relative(process.cwd(), devStateFile)}; stop with npm run services:stop`,
      )
      return
    }
    case 'stop': {
      const stopped = await stopServices(devStateFile)
      console.log(stopped.length ? `stopped ${stopped.join(', ')}` : 'no services were running')
      return
    }
    case 'status':
    case 'env': {
      if (!servicesRunning(current)) {
        throw new Error('services not running: start them with npm run services:start')
      }
      if (command === 'status') console.log(JSON.stringify(current, null, 2))
      else for (const [k, v] of Object.entries(testEnv(current))) console.log(`export ${k}=${v}`)
      return
    }
    default:
      throw new Error('usage: node infra/local/services.mjs start|stop|status|env')
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  cli(process.argv[2]).catch((error) => {
    console.error(`error: ${error.message}`)
    process.exit(1)
  })
}
