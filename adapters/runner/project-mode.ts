import { stat } from 'node:fs/promises'
import type { SandboxSettings } from './sandbox-settings.ts'

/**
 * The sandbox settings of a runner in project mode (one user's own folder is every session's
 * workspace, workspace-root.ts): commands must write that folder as its owner, so a runner that
 * runs as root drops to the folder's owner (and group) rather than TURNLINE_SANDBOX_UID or a
 * tenant uid — it never chowns the user's files. A folder owned by root would make commands run
 * as root: refused (the `turnline` command falls back to a sandbox folder before it comes to
 * this). A runner that is not root runs commands as itself, as always.
 */
export async function projectSandboxSettings(
  settings: SandboxSettings,
  project: string,
  runnerUid: number,
): Promise<SandboxSettings> {
  if (runnerUid !== 0) return settings
  const owner = await stat(project)
  if (owner.uid === 0 && settings.mode !== 'off') {
    throw new Error(
      `project mode: ${project} is owned by root, and commands never run sandboxed as root; ` +
        "run the runner as the folder's owner, or give the folder to an unprivileged user",
    )
  }
  return { ...settings, uid: owner.uid, gid: owner.gid, tenantUids: null }
}
