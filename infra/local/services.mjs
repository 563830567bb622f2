// Real local services for development and tests: moto_server (S3 with conditional writes, run from
// the chroot that setup-moto.sh builds) and redis-server, each on a free loopback port.
//
//   node infra/local/services.mjs start    start both, write .tmp/services.json, leave them running
//   node infra/local/services.mjs stop     stop the services recorded in .tmp/services.json
//   node infra/local/services.mjs status   print .tmp/services.json if its services are running
//   node infra/local/services.mjs env      print `export TURNLINE_TEST_…=…` lines for a shell
//
// Plain Node ESM (no TypeScript) so that it runs before anything is built.
import { spawn } from 'node:child_process'
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
import http from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
export const tmpDir = path.join(repoRoot, '.tmp')
export const devStateFile = path.join(tmpDir, 'services.json')
export const motoRoot = process.env.TURNLINE_MOTO_ROOT || '/var/cache/turnline/moto-root'
const S3_DEFAULTS = { region: 'us-east-1', accessKeyId: 'test', secretAccessKey: 'test' }
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
/** What each recorded pid must be running before we signal it (guards against pid reuse). */
const COMMAND_MARK = { moto: 'moto_server', redis: 'redis-server' }

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function findExecutable(name) {
  const dirs = `${process.env.PATH ?? ''}:${SYSTEM_PATH}`.split(':').filter(Boolean)
  return dirs.map((dir) => path.join(dir, name)).find((file) => existsSync(file)) ?? null
}

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

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

function httpAnswers(port) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', timeout: 1000 }, (res) => {
      res.resume()
      resolve(true)
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(false))
  })
}

function redisPongs(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port })
    let reply = ''
    const done = (ok) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (chunk) => {
      reply += chunk
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'))
    })
    socket.on('error', () => done(false))
  })
}

function isAlive(pid) {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return false
  }
}

function runs(pid, mark) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(mark)
  } catch {
    return false
  }
}

async function killGroup(pid) {
  const signal = (sig) => {
    try {
      process.kill(-pid, sig)
    } catch {
      try {
        process.kill(pid, sig)
      } catch {}
    }
  }
  signal('SIGTERM')
  for (let i = 0; i < 50 && isAlive(pid); i++) await sleep(100)
  if (isAlive(pid)) signal('SIGKILL')
  for (let i = 0; i < 50 && isAlive(pid); i++) await sleep(100)
}

function logTail(file) {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n')
  } catch {
    return '(no log)'
  }
}

/** Starts one service on a free port; retries on another port if the first one was taken. */
async function startOne({ name, command, args, env, probe, timeoutMs, logFile }) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const log = openSync(logFile, 'w')
    const child = spawn(command, args(port), { detached: true, stdio: ['ignore', log, log], env })
    closeSync(log)
    child.unref()
    let exit = null
    child.on('exit', (code, signal) => (exit = signal ?? `exit code ${code}`))
    child.on('error', (error) => (exit = error.message))
    const deadline = Date.now() + timeoutMs
    while (exit === null && Date.now() < deadline) {
      if (await probe(port)) return { port, pid: child.pid }
      await sleep(100)
    }
    if (child.pid !== undefined) await killGroup(child.pid)
    const tail = logTail(logFile)
    if (exit !== null && /address already in use/i.test(tail) && attempt < 3) continue
    const why = exit === null ? `did not answer within ${timeoutMs / 1000} s` : `exited (${exit})`
    throw new Error(`${name} on 127.0.0.1:${port} ${why}; log ${logFile}:\n${tail}`)
  }
}

/**
 * Starts moto_server and redis-server, waits until both answer, records them in `stateFile`
 * and returns their coordinates. Throws (after stopping whatever did start) when either fails.
 * `owner` is the pid whose exit makes the services stale (null: they outlive their starter).
 */
export async function startServices({ stateFile = devStateFile, owner = null } = {}) {
  const bin = preflight()
  const logDir = path.join(tmpDir, 'logs')
  mkdirSync(logDir, { recursive: true })
  const tag = path.basename(stateFile, '.json')
  const started = await Promise.allSettled([
    startOne({
      name: 'moto_server',
      command: bin.chroot,
      args: (port) => [motoRoot, 'moto_server', '-H', '127.0.0.1', '-p', String(port)],
      env: { PATH: SYSTEM_PATH, HOME: '/root', LC_ALL: 'C.UTF-8', PYTHONUNBUFFERED: '1' },
      probe: httpAnswers,
      timeoutMs: 30_000,
      logFile: path.join(logDir, `${tag}-moto.log`),
    }),
    startOne({
      name: 'redis-server',
      command: bin.redis,
      args: (port) =>
        ['--bind', '127.0.0.1', '--port', String(port), '--save', ''].concat([
          '--appendonly',
          'no',
          '--daemonize',
          'no',
          '--dir',
          tmpdir(),
        ]),
      env: process.env,
      probe: redisPongs,
      timeoutMs: 15_000,
      logFile: path.join(logDir, `${tag}-redis.log`),
    }),
  ])
  const [moto, redis] = started
  if (moto.status === 'rejected' || redis.status === 'rejected') {
    for (const s of started) if (s.status === 'fulfilled') await killGroup(s.value.pid)
    const reasons = started.filter((s) => s.status === 'rejected').map((s) => s.reason.message)
    throw new Error(reasons.join('\n'))
  }
  const info = {
    s3: { endpoint: `http://127.0.0.1:${moto.value.port}`, ...S3_DEFAULTS },
    redis: { url: `redis://127.0.0.1:${redis.value.port}` },
    pids: { moto: moto.value.pid, redis: redis.value.pid },
    owner,
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

/** Stops the services recorded in `stateFile` and removes it. Returns the names stopped. */
export async function stopServices(stateFile = devStateFile) {
  const info = readState(stateFile)
  const stopped = []
  for (const [name, pid] of Object.entries(info?.pids ?? {})) {
    if (!isAlive(pid) || !runs(pid, COMMAND_MARK[name] ?? '\0')) continue
    await killGroup(pid)
    stopped.push(name)
  }
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
      const info = await startServices()
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
