import { type CommandNetworks, type EgressStatus, withoutNetworks } from './command-networks.ts'

/**
 * The networks of a runner's commands while its egress probe may still run: the runner answers
 * once its sandbox probe has passed (confinement-probes.ts), and the egress probe, whose outcome
 * cannot refuse a start, ends when it ends. A command allowed the network waits in `open` for
 * that outcome — it never runs with a network it should not have, nor without one it should
 * have because the probe had not ended; a command without the network never calls `open` and
 * never waits. A probe that fails (a fault, not a finding: its folder could not be made, say)
 * leaves commands allowed the network without any, as a relay that does not work does.
 */
export interface ProbedNetworks extends Omit<CommandNetworks, 'status'> {
  /** How commands allowed the network reach it, once the probe has ended. */
  readonly status: Promise<EgressStatus>
}

export function probedNetworks(found: Promise<CommandNetworks>): ProbedNetworks {
  const networks = found.catch((error: unknown) =>
    withoutNetworks(
      `the egress probe failed: ${error instanceof Error ? error.message : String(error)}`,
    ),
  )
  let closing: Promise<void> | undefined
  return {
    status: networks.then((found) => found.status),
    open: async (owner, execSessionId) => (await networks).open(owner, execSessionId),
    close: () => {
      closing ??= networks.then((found) => found.close())
      return closing
    },
  }
}
