import { chmodSync, closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs'
import { createServer as createHttpServer } from 'node:http'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import type { SandboxScope } from '../../src/ports/sandbox-runner.ts'
import { type RunnerProcess, startRunnerProcess } from './runner-process.ts'
import { value } from './runner-results.ts'

let requests = 0

/** A runner process and a client for it. */
export async function runnerWithClient(options: {
  root: string
  secret: string
  env?: Record<string, string>
  inherit?: { fd: number; at: number }
}): Promise<{ process: RunnerProcess; client: HttpSandboxRunner }> {
  const process = await startRunnerProcess(options)
  return { process, client: new HttpSandboxRunner({ url: process.url, secret: options.secret }) }
}

/** Runs a command to its end (or `timeoutMs`) and returns its exit code and whole output. */
export async function runToEnd(
  client: HttpSandboxRunner,
  scope: SandboxScope,
  cmd: string,
  options: { network?: boolean; timeoutMs?: number } = {},
): Promise<{ exitCode: number | undefined; output: string; id: string }> {
  requests += 1
  const started = value(
    await client.start(scope, {
      requestId: `req_isolation_${Date.now()}_${requests}`,
      toolCallId: `call_${requests}`,
      cmd,
      tty: false,
      yieldTimeMs: 0,
      maxOutputBytes: 65_536,
      ...(options.network ? { network: true } : {}),
    }),
  )
  const done = value(
    await client.wait(scope, {
      execSessionId: started.execSessionId,
      timeoutMs: options.timeoutMs ?? 20_000,
      maxOutputBytes: 65_536,
      since: 0,
    }),
  )
  const output = `${done.output.head}${done.output.tail}`
  return {
    exitCode: done.state.status === 'exited' ? done.state.exitCode : undefined,
    output,
    id: started.execSessionId,
  }
}

/**
 * A TCP listener that counts the connections it accepted: on 127.0.0.1, on every interface
 * (`0.0.0.0`, `::`), or on an abstract unix socket (`\0name`).
 */
export async function startListener(host = '127.0.0.1'): Promise<{
  port: number
  connections: () => number
  close: () => Promise<void>
}> {
  let accepted = 0
  const server: Server = createServer((socket) => {
    accepted += 1
    socket.end('hello from the host\n')
  })
  await new Promise<void>((resolve) =>
    host.startsWith('\0')
      ? server.listen(host, () => resolve())
      : server.listen(0, host, () => resolve()),
  )
  const address = server.address()
  return {
    port: address !== null && typeof address !== 'string' ? address.port : 0,
    connections: () => accepted,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

/** A shell line that connects to 127.0.0.1:port (bash's /dev/tcp; no curl or nc needed). */
export const connectCommand = (port: number) =>
  `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port} && head -n1 <&3 && echo CONNECTED' 2>&1; echo "exit=$?"`

/**
 * An HTTP server on `host` (127.0.0.1, or every interface with `0.0.0.0`) that answers every
 * request with `text` (`delayMs` after it came), counts them and records the local address each
 * one came in on.
 */
export async function startHttpTarget(
  text: string,
  host = '127.0.0.1',
  delayMs = 0,
): Promise<{
  port: number
  requests: () => number
  /** The address each request was sent to (its connection's local address), in order. */
  reachedAt: () => string[]
  close: () => Promise<void>
}> {
  let requests = 0
  const reached: string[] = []
  const server = createHttpServer((req, res) => {
    requests += 1
    reached.push(req.socket.localAddress ?? '')
    if (delayMs === 0) res.end(`${text}\n`)
    else setTimeout(() => res.end(`${text}\n`), delayMs)
  })
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  return {
    port: address.port,
    requests: () => requests,
    reachedAt: () => [...reached],
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** curl as a command's HTTP client (it reads HTTP_PROXY and friends): body, status, exit code. */
export const curlCommand = (url: string, flags = '') =>
  `curl -sS -m 20 ${flags} -w '\nstatus=%{http_code}\n' '${url}' 2>&1; echo "exit=$?"`
/** Where the runner of the descriptor tests inherits an open host file (see `inherit`). */
export const INHERITED = 77

/**
 * A shell line writing `<out>.fds` (the descriptors `ls` started with, as `ls -l /proc/self/fd`)
 * and `<out>` (what descriptor INHERITED gives: read, then written; bash, as dash has no fd 77).
 */
export const descriptorsLine = (out: string) =>
  [
    `ls -l /proc/self/fd > ${out}.fds`,
    `bash -c 'cat <&${INHERITED}; echo pwned >&${INHERITED}' > ${out} 2>&1; echo "use=$?" >> ${out}`,
  ].join('; ')

/** The descriptor numbers of such a listing, but the one `ls` opened to read the folder. */
export const descriptors = (listing: string) =>
  [...listing.matchAll(/ (\d+) -> (.*)$/gm)]
    .filter((m) => !/^\/proc\/\d+\/fd$/.test(m[2] ?? ''))
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b)

/**
 * A root-only host file outside every root, open read-write in this process: what a descriptor a
 * job runner leaks to the runner exposes. Pass `{ fd, at: INHERITED }` as the runner's `inherit`.
 */
export function openHostFile(text: string): { fd: number; path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'turnline-host-'))
  const path = join(dir, 'secret.txt')
  writeFileSync(path, text)
  chmodSync(path, 0o600)
  const fd = openSync(path, 'r+')
  return {
    fd,
    path,
    remove: () => {
      closeSync(fd)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Polls a running command until its output from `since` holds `marker`; fails if it ends first. */
export async function untilOutput(
  client: HttpSandboxRunner,
  scope: SandboxScope,
  execSessionId: string,
  marker: string,
  since = 0,
): Promise<void> {
  for (;;) {
    const polled = value(
      await client.poll(scope, { execSessionId, yieldTimeMs: 200, maxOutputBytes: 65_536, since }),
    )
    const said = `${polled.output.head}${polled.output.tail}`
    if (said.includes(marker)) return
    if (polled.state.status !== 'running') throw new Error(`the command ended: ${said}`)
  }
}
