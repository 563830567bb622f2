/**
 * The reference sandbox runner as a process:
 *
 *   TURNLINE_RUNNER_SECRET=… tsx adapters/runner/main.ts --root ./.turnline-runner [--port 8788]
 *       [--host 127.0.0.1] [--callback-url http://127.0.0.1:8787/v1/runner/callback]
 *
 * Flags may also come from TURNLINE_RUNNER_ROOT, TURNLINE_RUNNER_PORT, TURNLINE_RUNNER_HOST and
 * TURNLINE_RUNNER_CALLBACK_URL; the secret only from the environment (argv is visible to every
 * user of the machine). The command sandbox is configured by the TURNLINE_SANDBOX* variables
 * (docs/configuration.md). Prints one JSON line `{"listening":"<url>","sandbox":{…},"egress":{…}}`
 * on stdout once its egress probe has ended (it accepts requests from when its sandbox probe
 * passed; a command allowed the network waits for the egress probe); SIGTERM and SIGINT end
 * every running command and exit.
 */
import { parseArgs } from 'node:util'
import { startRunner } from './runner-server.ts'
import { parseSandboxEnv } from './sandbox-settings.ts'

function fail(message: string): never {
  process.stderr.write(`runner: ${message}\n`)
  process.exit(2)
}

const { values } = parseArgs({
  options: {
    root: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    'callback-url': { type: 'string' },
  },
  strict: true,
})

const env = process.env
const root = values.root ?? env.TURNLINE_RUNNER_ROOT
const secret = env.TURNLINE_RUNNER_SECRET
const portText = values.port ?? env.TURNLINE_RUNNER_PORT ?? '0'
const host = values.host ?? env.TURNLINE_RUNNER_HOST ?? '127.0.0.1'
const callbackUrl = values['callback-url'] ?? env.TURNLINE_RUNNER_CALLBACK_URL

if (!root) fail('set --root or TURNLINE_RUNNER_ROOT (the folder holding the workspaces)')
if (!secret || secret.length < 16) fail('set TURNLINE_RUNNER_SECRET (at least 16 characters)')
const port = Number(portText)
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`invalid port ${portText}`)
if (callbackUrl !== undefined && !URL.canParse(callbackUrl))
  fail(`invalid callback URL ${callbackUrl}`)
const sandbox = parseSandboxEnv(env)
if (!sandbox.ok)
  fail(`invalid configuration:\n${sandbox.problems.map((p) => `  - ${p}`).join('\n')}`)

const runner = await startRunner({
  root,
  secret,
  port,
  host,
  sandbox: sandbox.settings,
  ...(callbackUrl ? { callbackUrl } : {}),
}).catch((error: Error) => fail(error.message))

let stopping = false
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return
    stopping = true
    void runner.close().then(() => process.exit(0))
  })
}

if (runner.sandbox.isolation === 'none') {
  process.stderr.write(
    `runner: WARNING: commands run UNSANDBOXED as uid ${runner.sandbox.uid}, with this machine's ` +
      `files and network (no egress policy: they reach its loopback services, private networks ` +
      `and cloud metadata): ${runner.sandbox.reason}\n`,
  )
} else {
  for (const warning of runner.sandbox.warnings)
    process.stderr.write(`runner: WARNING: ${warning}\n`)
}
for (const warning of runner.tenantLimits.warnings) {
  process.stderr.write(`runner: WARNING: ${warning}\n`)
}
const egress = await runner.egress
if (
  runner.sandbox.isolation === 'bwrap' &&
  egress.mode === 'none' &&
  sandbox.settings.network !== 'off'
) {
  process.stderr.write(`runner: WARNING: commands allowed the network get none: ${egress.reason}\n`)
}
const { url, sandbox: status, tenantLimits } = runner
process.stdout.write(
  `${JSON.stringify({ listening: url, sandbox: status, egress, tenant_limits: tenantLimits })}\n`,
)
