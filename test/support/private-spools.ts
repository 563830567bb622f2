import { access, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ExecStartRequest, SandboxScope } from '../../src/ports/sandbox-runner.ts'

/** Whether a file is there. */
export const exists = (file: string): Promise<boolean> =>
  access(file).then(
    () => true,
    () => false,
  )

/** A command's private spool in the runner's state folder under `root`. */
export const privateSpoolPath = (root: string, scope: SandboxScope, id: string): string =>
  join(root, '.runner-state', scope.tenant, scope.sessionId, 'spools', `write_stdin_${id}.txt`)

/** Resolves once the runner under `root` has written the command's exit into its record. */
export async function recordedExit(root: string, scope: SandboxScope, id: string): Promise<void> {
  const file = join(root, '.runner-state', scope.tenant, scope.sessionId, 'exec', `${id}.json`)
  for (let look = 0; look < 500; look++) {
    const record = await readFile(file, 'utf8').catch(() => '')
    if (record.includes('"exit_code"')) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`no exit recorded for ${id}`)
}

/** A start of `cmd` under `requestId` that returns at once, its output private unless told. */
export const startRequest = (
  requestId: string,
  cmd: string,
  { privateOutput = true, maxOutputBytes = 65_536 } = {},
): ExecStartRequest => ({
  requestId,
  toolCallId: `call_${requestId}`,
  cmd,
  tty: false,
  yieldTimeMs: 0,
  maxOutputBytes,
  ...(privateOutput ? { privateOutput: true } : {}),
})
