import { type CommandNetworks, openCommandNetworks } from './command-networks.ts'
import type { CommandSandbox } from './command-sandbox.ts'
import type { PrivateSpoolIndex } from './private-spool-index.ts'
import { type ProbedNetworks, probedNetworks } from './probed-networks.ts'
import { openSandbox } from './sandbox-probe.ts'
import type { SandboxSettings } from './sandbox-settings.ts'
import { TenantLimitEnforcer } from './tenant-limit-enforcer.ts'

/** How a runner confines its commands, found out at its start. */
export interface Confinement {
  sandbox: CommandSandbox
  limits: TenantLimitEnforcer
  /** Found out after the start has answered: commands allowed the network wait for it. */
  networks: ProbedNetworks
}

/**
 * What a runner's start finds out: whether commands run in bubblewrap (the sandbox probe,
 * sandbox-probe.ts: the only one that can refuse the start), how tenants are held to their
 * limits (uids, cgroups: TenantLimitEnforcer) and how commands allowed the network reach it (the
 * egress proxy, probed with a real relay in the sandbox: command-networks.ts).
 *
 * They are found out side by side, as each is a launch or two that mostly waits: the limits and
 * the egress probe start with the sandbox as it will be if the sandbox probe's command works,
 * beside that command. What they found is kept only when the sandbox probe ends with that very
 * sandbox; otherwise (the kernel refused the seccomp filter, or no sandbox works) it is closed
 * and found out again for the sandbox there is. A refusal is thrown after what began beside it
 * is closed. This resolves once the sandbox and the limits are known; the egress probe may
 * still run (probed-networks.ts): its outcome cannot refuse a start, commands allowed the
 * network wait for it, and its warning is logged when it ends. The sandbox's warnings are logged
 * before the limits'. If the limits fail, the networks are closed and the failure is thrown.
 */
export async function openConfinement(options: {
  root: string
  settings: SandboxSettings
  project: boolean
  /** The runner's private spools, counted in each tenant's disk use. */
  spools: PrivateSpoolIndex
  log: (entry: Record<string, unknown>) => void
}): Promise<Confinement> {
  const { root, settings, log } = options
  const findFor = (sandbox: CommandSandbox): Found => {
    const found = {
      candidate: sandbox,
      networks: openCommandNetworks({ sandbox, rules: settings.egress, root, log }),
      limits: TenantLimitEnforcer.open(root, sandbox, log, options.spools, options.project),
    }
    found.networks.catch(() => undefined)
    found.limits.catch(() => undefined)
    return found
  }
  let ahead: Found | undefined
  const sandbox = await openSandbox(settings, root, (candidate) => {
    ahead = findFor(candidate)
  }).catch(async (error: unknown) => {
    await closeFound(ahead)
    throw error
  })
  if (sandbox.status.isolation === 'none') {
    log({ event: 'sandbox_unavailable', level: 'warn', reason: sandbox.status.reason })
  } else {
    for (const warning of sandbox.status.warnings) {
      log({ event: 'sandbox_weakened', level: 'warn', reason: warning })
    }
  }
  let kept: Found
  if (ahead !== undefined && ahead.candidate === sandbox) kept = ahead
  else {
    await closeFound(ahead)
    kept = findFor(sandbox)
  }
  const networks = probedNetworks(kept.networks)
  void networks.status.then((egress) => {
    if (egress.mode === 'none' && settings.network !== 'off') {
      log({ event: 'egress_unavailable', level: 'warn', reason: egress.reason })
    }
  })
  const limits = await kept.limits.catch(async (error: unknown) => {
    await networks.close()
    throw error
  })
  for (const warning of limits.status.warnings) {
    log({ event: 'tenant_limit_unenforced', level: 'warn', warning })
  }
  return { sandbox, limits, networks }
}

/** The limits and networks found for one sandbox (the candidate, or the one there is). */
interface Found {
  candidate: CommandSandbox
  networks: Promise<CommandNetworks>
  limits: Promise<TenantLimitEnforcer>
}

/** Closes what was found for a sandbox whose outcome is not used, once each has one. */
async function closeFound(found: Found | undefined): Promise<void> {
  if (found === undefined) return
  const [networks, limits] = await Promise.all([
    found.networks.catch(() => undefined),
    found.limits.catch(() => undefined),
  ])
  await Promise.all([networks?.close(), limits?.close()])
}
