import { type CommandNetworks, openCommandNetworks } from './command-networks.ts'
import type { CommandSandbox } from './command-sandbox.ts'
import { openSandbox } from './sandbox-probe.ts'
import type { SandboxSettings } from './sandbox-settings.ts'
import { TenantLimitEnforcer } from './tenant-limit-enforcer.ts'

/** How a runner confines its commands, found out at its start. */
export interface Confinement {
  sandbox: CommandSandbox
  limits: TenantLimitEnforcer
  networks: CommandNetworks
}

/**
 * What a runner's start finds out before it answers: whether commands run in bubblewrap (the
 * sandbox probe, sandbox-probe.ts: the only one that can refuse the start), how tenants are held
 * to their limits (uids, cgroups: TenantLimitEnforcer) and how commands allowed the network
 * reach it (the egress proxy, probed with a real relay in the sandbox: command-networks.ts).
 *
 * They are found out side by side, as each is a launch or two that mostly waits: the egress
 * probe starts with the sandbox as it will be if the sandbox probe's command works, beside that
 * command, and the limits beside the egress probe. The egress probe's outcome is kept only when
 * the sandbox probe ends with that very sandbox; otherwise (the kernel refused the seccomp filter,
 * or no sandbox works) its proxy is closed and the networks are found out again for the sandbox
 * there is — as before, when they came after it. A refusal is thrown after the egress probe
 * begun beside it is closed. What each warns of is logged in the order it was: the sandbox, the
 * limits, the network. If the limits or the networks fail, the other is closed and the failure
 * (the limits' first) is thrown.
 */
export async function openConfinement(options: {
  root: string
  settings: SandboxSettings
  project: boolean
  log: (entry: Record<string, unknown>) => void
}): Promise<Confinement> {
  const { root, settings, log } = options
  const networksOf = (sandbox: CommandSandbox) =>
    openCommandNetworks({ sandbox, rules: settings.egress, root, log })
  let ahead: { candidate: CommandSandbox; networks: Promise<CommandNetworks> } | undefined
  const sandbox = await openSandbox(settings, root, (candidate) => {
    const networks = networksOf(candidate)
    networks.catch(() => undefined)
    ahead = { candidate, networks }
  }).catch(async (error: unknown) => {
    await closeNetworks(ahead?.networks)
    throw error
  })
  if (sandbox.status.isolation === 'none') {
    log({ event: 'sandbox_unavailable', level: 'warn', reason: sandbox.status.reason })
  } else {
    for (const warning of sandbox.status.warnings) {
      log({ event: 'sandbox_weakened', level: 'warn', reason: warning })
    }
  }
  let networksFound: Promise<CommandNetworks>
  if (ahead !== undefined && ahead.candidate === sandbox) networksFound = ahead.networks
  else {
    await closeNetworks(ahead?.networks)
    networksFound = networksOf(sandbox)
  }
  const [limits, networks] = await Promise.allSettled([
    TenantLimitEnforcer.open(root, sandbox, log, options.project),
    networksFound,
  ])
  if (limits.status === 'rejected' || networks.status === 'rejected') {
    await Promise.all([
      limits.status === 'fulfilled' ? limits.value.close() : undefined,
      networks.status === 'fulfilled' ? networks.value.close() : undefined,
    ])
    throw limits.status === 'rejected' ? limits.reason : (networks as PromiseRejectedResult).reason
  }
  for (const warning of limits.value.status.warnings) {
    log({ event: 'tenant_limit_unenforced', level: 'warn', warning })
  }
  const egress = networks.value.status
  if (egress.mode === 'none' && settings.network !== 'off') {
    log({ event: 'egress_unavailable', level: 'warn', reason: egress.reason })
  }
  return { sandbox, limits: limits.value, networks: networks.value }
}

/** Closes the networks of a probe whose outcome is not used, once it has one. */
async function closeNetworks(found: Promise<CommandNetworks> | undefined): Promise<void> {
  const networks = await found?.catch(() => undefined)
  await networks?.close()
}
