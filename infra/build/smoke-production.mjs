// The production path without Docker, step for step as the Dockerfile takes it:
//
//   1. a clean copy of exactly what .dockerignore lets into the image build;
//   2. `npm ci --ignore-scripts` and `node infra/build/build.mjs node` there (the build stage);
//   3. a separate folder with `npm ci --omit=dev --ignore-scripts` and dist/node copied in (the
//      runtime stages): no tsx, no devDependencies;
//   4. the runner and the server started from it as in docker-compose.yml (two processes, signed
//      runner protocol, exit callbacks), on S3 (moto) and plain Redis when the local services are
//      running, with the Dockerfile's HEALTHCHECK command run against both;
//   5. `node dist/node/check.mjs --create-bucket` and `node dist/node/retention.mjs` against the
//      same storage;
//   6. in the build copy, `npm ci --omit=dev` and then `npm start` (a clone installed for
//      production) serve from dist/ as well, with the embedded runner as a child process
//      (dist/node/runner-child.mjs) running a command.
//
//   node infra/build/smoke-production.mjs      (CI runs it; needs the npm registry or its cache)
//
// Prints what it does; exits non-zero on the first failure.
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort, sleep } from '../local/processes.mjs'
import { devStateFile, servicesRunning, testEnv } from '../local/services.mjs'

const root = fileURLToPath(new URL('../../', import.meta.url))
const work = mkdtempSync(path.join(tmpdir(), 'turnline-prod-'))
// The sandbox user must reach the runner's workspaces below it, as in the container image.
chmodSync(work, 0o755)
const children = new Set()

function step(text) {
  console.log(`\n-- ${text}`)
}

function sh(command, args, cwd, env = {}) {
  console.log(`$ ${command} ${args.join(' ')}`)
  execFileSync(command, args, { cwd, stdio: 'inherit', env: { ...process.env, ...env } })
}

/** The paths .dockerignore re-includes (`!path` lines after `**`). */
function imagePaths() {
  const lines = readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n')
  return lines.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/$/, ''))
}

function start(name, args, cwd, env) {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.add(child)
  let output = ''
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-20_000)
  }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  child.on('exit', () => children.delete(child))
  return { child, output: () => output, name }
}

async function waitFor(started, pattern, ms = 20_000) {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(50)) {
    const match = pattern.exec(started.output())
    if (match) return match
    if (started.child.exitCode !== null) break
  }
  throw new Error(`${started.name} did not start:\n${started.output()}`)
}

async function stop(started) {
  if (started.child.exitCode !== null) return started.child.exitCode
  const exited = new Promise((resolve) => started.child.once('exit', (code) => resolve(code)))
  started.child.kill('SIGTERM')
  const code = await Promise.race([exited, sleep(8000).then(() => 'timeout')])
  if (code === 'timeout') {
    started.child.kill('SIGKILL')
    throw new Error(`${started.name} did not stop on SIGTERM within 8 s`)
  }
  return code
}

/** The Dockerfile's HEALTHCHECK for the server or the runner, run with PORT/… as in the image. */
function healthcheck(stage, env) {
  const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8')
  const stageText = dockerfile.split(/^FROM /m).find((s) => new RegExp(`AS ${stage}\\b`).test(s))
  const match = /HEALTHCHECK[^\n]*\\\n\s*CMD \["node", "-e", "((?:[^"\\]|\\.)*)"\]/.exec(
    stageText ?? '',
  )
  if (!match) throw new Error(`no HEALTHCHECK found in the Dockerfile's ${stage} stage`)
  const script = JSON.parse(`"${match[1]}"`)
  execFileSync(process.execPath, ['-e', script], {
    env: { ...process.env, ...env },
    stdio: 'inherit',
  })
  console.log(`healthcheck of the ${stage} stage: healthy`)
}

async function call(url, init = {}) {
  const response = await fetch(url, init)
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : null }
}

async function main() {
  step('1. the image build context (.dockerignore)')
  const src = path.join(work, 'src')
  for (const entry of imagePaths()) {
    cpSync(path.join(root, entry), path.join(src, entry), { recursive: true })
  }
  console.log(`copied ${imagePaths().join(', ')} to ${src}`)

  step('2. build stage: npm ci --ignore-scripts, build')
  sh('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline'], src)
  sh(process.execPath, ['infra/build/build.mjs', 'node'], src)

  step('3. runtime stage: production dependencies only, dist/node copied in')
  const app = path.join(work, 'app')
  cpSync(path.join(src, 'package.json'), path.join(app, 'package.json'))
  cpSync(path.join(src, 'package-lock.json'), path.join(app, 'package-lock.json'))
  sh(
    'npm',
    ['ci', '--omit=dev', '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline'],
    app,
  )
  cpSync(path.join(src, 'dist/node'), path.join(app, 'dist/node'), { recursive: true })
  for (const devOnly of ['tsx', 'typescript', 'esbuild', 'vitest', 'wrangler']) {
    if (existsSync(path.join(app, 'node_modules', devOnly))) {
      throw new Error(`the production install contains the dev dependency ${devOnly}`)
    }
  }
  console.log('no dev dependencies in the production install')

  step('4. runner and server as two processes (docker-compose.yml)')
  const services = JSON.parse(
    existsSync(devStateFile) ? readFileSync(devStateFile, 'utf8') : 'null',
  )
  const storage = {}
  if (process.env.TURNLINE_TEST_S3_ENDPOINT && process.env.TURNLINE_TEST_REDIS_URL) {
    Object.assign(storage, {
      S3_ENDPOINT: process.env.TURNLINE_TEST_S3_ENDPOINT,
      REDIS_URL: process.env.TURNLINE_TEST_REDIS_URL,
    })
  } else if (servicesRunning(services)) {
    const env = testEnv(services)
    Object.assign(storage, {
      S3_ENDPOINT: env.TURNLINE_TEST_S3_ENDPOINT,
      REDIS_URL: env.TURNLINE_TEST_REDIS_URL,
    })
  }
  if (storage.S3_ENDPOINT) {
    Object.assign(storage, {
      S3_BUCKET: `turnline-prod-${Date.now().toString(36)}`,
      S3_FORCE_PATH_STYLE: 'true',
      S3_ACCESS_KEY_ID: 'test',
      S3_SECRET_ACCESS_KEY: 'test',
    })
    console.log(
      `storage: S3 ${storage.S3_ENDPOINT} bucket ${storage.S3_BUCKET}, Redis ${storage.REDIS_URL}`,
    )
    sh(process.execPath, ['dist/node/check.mjs', '--create-bucket'], app, {
      ...storage,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    })
  } else {
    storage.TURNLINE_DATA_DIR = path.join(work, 'data')
    console.log('storage: the filesystem store (local services not running)')
  }
  const secret = 'smoke-runner-secret-0123456789'
  const key = 'smoke-api-key-0123456789'
  const [runnerPort, serverPort] = [await freePort(), await freePort()]
  const runner = start('runner', ['--enable-source-maps', 'dist/node/runner.mjs'], app, {
    NODE_ENV: 'production',
    TURNLINE_RUNNER_ROOT: path.join(work, 'workspaces'),
    // As the runner image: commands sandboxed or not at all (a multi-tenant server refuses an
    // unsandboxed runner).
    TURNLINE_SANDBOX: 'require',
    TURNLINE_RUNNER_HOST: '127.0.0.1',
    TURNLINE_RUNNER_PORT: String(runnerPort),
    TURNLINE_RUNNER_SECRET: secret,
    TURNLINE_RUNNER_CALLBACK_URL: `http://127.0.0.1:${serverPort}/v1/runner/callback`,
  })
  await waitFor(runner, /"listening"/)
  healthcheck('runner', { TURNLINE_RUNNER_PORT: String(runnerPort) })
  const server = start('server', ['--enable-source-maps', 'dist/node/server.mjs'], app, {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(serverPort),
    TURNLINE_API_KEYS: `${key}=smoke`,
    TURNLINE_RUNNER_URL: `http://127.0.0.1:${runnerPort}`,
    TURNLINE_RUNNER_SECRET: secret,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...storage,
  })
  const [, url] = await waitFor(server, /listening on (http:\/\/\S+)/)
  healthcheck('server', { PORT: String(serverPort) })
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const created = await call(`${url}/v1/sessions`, { method: 'POST', headers: auth, body: '{}' })
  if (created.status !== 201)
    throw new Error(`create session: ${created.status} ${JSON.stringify(created.body)}`)
  const id = created.body.session_id
  const events = await fetch(`${url}/v1/sessions/${id}/events`, { headers: auth })
  const lines = (await events.text()).trim().split('\n')
  if (JSON.parse(lines[0]).event.type !== 'thread.started') throw new Error(`events: ${lines[0]}`)
  console.log(`session ${id} created; its log starts with thread.started`)
  // The signed callback route exists only when a runner is configured: unsigned → 401, not 404.
  const callback = await call(`${url}/v1/runner/callback`, { method: 'POST', body: '{}' })
  if (callback.status !== 401) {
    throw new Error(
      `runner callback route answered ${callback.status}, expected 401:\n${server.output()}`,
    )
  }
  console.log('the runner callback route is enabled and refuses unsigned notices')
  const swept = JSON.parse(
    execFileSync(process.execPath, ['dist/node/retention.mjs'], {
      cwd: app,
      env: { ...process.env, ...storage, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    }).toString(),
  )
  if (swept.workspaces < 1 || swept.failed.length > 0 || swept.deleted !== 0) {
    throw new Error(`retention.mjs: ${JSON.stringify(swept)}`)
  }
  console.log(`retention.mjs swept ${swept.workspaces} workspace(s), deleted nothing young`)
  for (const started of [server, runner]) {
    const code = await stop(started)
    if (code !== 0)
      throw new Error(`${started.name} exited ${code} on SIGTERM:\n${started.output()}`)
  }
  console.log('server and runner stopped cleanly on SIGTERM')

  step('6. a clone installed for production: npm ci --omit=dev, then npm start')
  sh(
    'npm',
    ['ci', '--omit=dev', '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline'],
    src,
  )
  cpSync(path.join(root, 'infra/start.mjs'), path.join(src, 'infra/start.mjs'))
  const npmStart = spawn('npm', ['start'], {
    cwd: src,
    env: { ...process.env, PORT: '0', TURNLINE_DATA_DIR: path.join(work, 'npm-start') },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  const started = { child: npmStart, name: 'npm start', output: () => text }
  let text = ''
  npmStart.stdout.on('data', (c) => (text += c))
  npmStart.stderr.on('data', (c) => (text += c))
  const [, startedUrl] = await waitFor(started, /listening on (http:\/\/\S+)/)
  const health = await call(`${startedUrl}/healthz`)
  // The embedded runner is dist/node/runner-child.mjs, a child process: a command runs there.
  const session = await call(`${startedUrl}/v1/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  const turn = await call(`${startedUrl}/v1/sessions/${session.body?.session_id}/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input: 'run `echo from-the-built-runner`' }),
  })
  process.kill(-npmStart.pid, 'SIGTERM')
  if (health.status !== 200) throw new Error(`npm start: /healthz answered ${health.status}`)
  if (!/the reference runner in child process \d+/.test(text)) {
    throw new Error(`npm start did not start its runner as a child process:\n${text}`)
  }
  if (!JSON.stringify(turn.body).includes('from-the-built-runner')) {
    throw new Error(`npm start: the command did not run: ${JSON.stringify(turn.body)}\n${text}`)
  }
  console.log(
    `npm start without dev dependencies served ${startedUrl} from dist/, its runner a child`,
  )
}

let failed = false
try {
  await main()
  console.log('\nproduction smoke: passed')
} catch (error) {
  failed = true
  console.error(`\nproduction smoke: FAILED: ${error.stack ?? error}`)
} finally {
  for (const child of children) child.kill('SIGKILL')
  rmSync(work, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)
