// Process helpers for infra/local/services.mjs: free ports, readiness probes, starting a detached
// service process and stopping its process group. Plain Node ESM.
import { spawn } from 'node:child_process'
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import path from 'node:path'

export const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

export function findExecutable(name) {
  const dirs = `${process.env.PATH ?? ''}:${SYSTEM_PATH}`.split(':').filter(Boolean)
  return dirs.map((dir) => path.join(dir, name)).find((file) => existsSync(file)) ?? null
}

export function freePort() {
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

export function httpAnswers(port) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', timeout: 1000 }, (res) => {
      res.resume()
      resolve(true)
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(false))
  })
}

export function redisPongs(port) {
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

export function isAlive(pid) {
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

export function runs(pid, mark) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(mark)
  } catch {
    return false
  }
}

export async function killGroup(pid) {
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
export async function startProcess({
  name,
  command,
  args,
  env,
  probe,
  timeoutMs,
  logFile,
  extraFds = [],
}) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const log = openSync(logFile, 'w')
    const child = spawn(command, args(port), {
      detached: true,
      stdio: ['ignore', log, log, ...extraFds],
      env,
    })
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
