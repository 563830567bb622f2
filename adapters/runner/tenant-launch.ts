import type { Launch } from './sandbox-launch.ts'

/** How one tenant's launches are held to the tenant's limits (see tenant-limit-enforcer.ts). */
export interface Confinement {
  /** `cgroup.procs` files the command joins before it starts (the runner runs as root). */
  cgroupProcs: readonly string[]
  /**
   * RLIMIT_NPROC of the process that creates the sandbox's user namespace, running as the
   * tenant's own uid: the kernel (5.14+) counts every process of that uid, in any namespace it
   * created, against this number.
   */
  processes?: number
  prlimit: string
  setpriv: string
}

/** Writes its own pid into each file named before `--`, then becomes the rest of its arguments. */
const JOIN = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'

/**
 * Wraps a launch so that nothing of the command runs before it is confined. With cgroups, a
 * root `sh` joins the tenant's cgroups, then (through prlimit and setpriv) drops to the tenant's
 * user and becomes bubblewrap: every process the command forks is born inside. Without, the
 * spawn drops to the tenant's user as before and prlimit sets the process limit. Each step
 * `exec`s the next, so the launch's process depths stay as they were.
 */
export function confineLaunch(launch: Launch, confinement: Confinement): Launch {
  const nproc =
    confinement.processes === undefined
      ? []
      : [confinement.prlimit, `--nproc=${confinement.processes}:`, '--']
  if (confinement.cgroupProcs.length === 0) {
    if (nproc.length === 0) return launch
    const [file, ...args] = [...nproc, launch.file, ...launch.args]
    return { ...launch, file: file!, args }
  }
  const drop =
    launch.uid === undefined
      ? []
      : [
          confinement.setpriv,
          `--reuid=${launch.uid}`,
          `--regid=${launch.gid ?? launch.uid}`,
          '--clear-groups',
          '--',
        ]
  const { uid: _uid, gid: _gid, ...rest } = launch
  return {
    ...rest,
    file: '/bin/sh',
    args: [
      '-c',
      JOIN,
      'sh',
      ...confinement.cgroupProcs,
      '--',
      ...nproc,
      ...drop,
      launch.file,
      ...launch.args,
    ],
  }
}
