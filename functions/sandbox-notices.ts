import type { EgressStatus } from '../adapters/runner/command-networks.ts'
import type { SandboxStatus } from '../adapters/runner/command-sandbox.ts'

/** Start notes: lines for the operator, plain and loud. */
export interface StartNotes {
  notices: string[]
  warnings: string[]
}

/**
 * What `npm start` says at start about the embedded runner's sandbox. How commands allowed the
 * network reach it is said by `egressNotes`, once the runner's egress probe has ended.
 */
export function sandboxNotes(status: SandboxStatus, notices: string[], warnings: string[]): void {
  if (status.isolation === 'bwrap') {
    const network =
      status.network === 'off'
        ? 'no network'
        : `network ${status.network === 'session' ? 'only for sessions that allow it' : 'for every command'}`
    notices.push(
      `sandbox: commands run in bubblewrap ${status.version} as uid ${status.uid}, ${network}, ` +
        `limits ${status.limits.memoryMb} MiB memory, ${status.limits.cpuSeconds} s CPU, ` +
        `${status.limits.timeLimitSeconds} s wall clock per command`,
    )
    warnings.push(...status.warnings.map((warning) => `sandbox: ${warning}`))
    return
  }
  warnings.push(
    `commands run UNSANDBOXED (${status.reason}): as uid ${status.uid}${status.uid === 0 ? ' (root)' : ''}, ` +
      "with this server's files, processes and network; a command can read this server's " +
      'environment (its secrets) through /proc, and no egress policy applies: it reaches ' +
      "this host's loopback services, private networks and cloud metadata. Fine for one " +
      'trusted user on this machine; never serve others like this (with TURNLINE_API_KEYS the ' +
      'server refuses to start).',
  )
}

/** What is said of the network of sandboxed commands allowed one, once the egress probe ended. */
export function egressNotes(status: SandboxStatus, egress: EgressStatus): StartNotes {
  if (status.isolation !== 'bwrap' || status.network === 'off') return { notices: [], warnings: [] }
  if (egress.mode === 'proxy') {
    return {
      notices: [
        'sandbox: commands allowed the network reach it through the egress proxy (the public internet only)',
      ],
      warnings: [],
    }
  }
  return {
    notices: [],
    warnings: [
      `commands of sessions allowed the network get NONE: ${egress.reason}. Install socat ` +
        '(apt-get install socat) for the egress proxy, or set TURNLINE_SANDBOX_NETWORK=off.',
    ],
  }
}
