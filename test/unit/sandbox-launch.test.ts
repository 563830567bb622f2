import { describe, expect, it } from 'vitest'
import { type BwrapHost, bwrapLaunch, tmpfsSizes } from '../../adapters/runner/sandbox-launch.ts'
import { DEFAULT_SANDBOX_SETTINGS } from '../../adapters/runner/sandbox-settings.ts'

const MIB = 1024 * 1024
const host = (version: [number, number, number]): BwrapHost => ({
  bwrap: '/usr/bin/bwrap',
  version,
  systemMounts: ['--ro-bind', '/usr', '/usr'],
  prlimit: '/usr/bin/prlimit',
  uid: 65534,
  gid: 65534,
  dropPrivileges: true,
  readOnlyPaths: [],
})
const limits = { ...DEFAULT_SANDBOX_SETTINGS.limits, memoryMb: 1000 }
const spec = {
  argv: ['sh', '-c', 'true'],
  workspace: '/w',
  cwd: '/w',
  env: { PATH: '/usr/bin' },
  network: false as const,
}
/** The arguments from `--dev` up to the workspace bind: the memory-backed folders. */
const mounts = (version: [number, number, number]) => {
  const args = bwrapLaunch(host(version), limits, spec).args
  return args.slice(args.indexOf('--dev'), args.indexOf('--dir'))
}

describe('bubblewrap launch: memory-backed folders', () => {
  it('split the memory limit: ¾ to /tmp, ¼ to /dev/shm, nothing to /dev', () => {
    expect(tmpfsSizes(limits)).toEqual({ tmpMb: 750, shmMb: 250 })
    expect(tmpfsSizes({ ...limits, memoryMb: 64 })).toEqual({ tmpMb: 48, shmMb: 16 })
    expect(tmpfsSizes({ ...limits, memoryMb: 4097 })).toEqual({ tmpMb: 3073, shmMb: 1024 })
  })

  it('size each tmpfs right before it (--size applies to the next --tmpfs only) and make /dev read-only', () => {
    expect(mounts([0, 8, 0])).toEqual([
      '--dev',
      '/dev',
      '--size',
      String(250 * MIB),
      '--tmpfs',
      '/dev/shm',
      '--remount-ro',
      '/dev',
      '--size',
      String(750 * MIB),
      '--tmpfs',
      '/tmp',
    ])
    expect(mounts([0, 7, 0])).toContain('--size')
  })

  it('leave --size out for bubblewrap before 0.7, which does not know it', () => {
    for (const version of [
      [0, 6, 3],
      [0, 4, 1],
    ] as [number, number, number][]) {
      expect(mounts(version)).toEqual([
        '--dev',
        '/dev',
        '--tmpfs',
        '/dev/shm',
        '--remount-ro',
        '/dev',
        '--tmpfs',
        '/tmp',
      ])
    }
  })
})

describe('bubblewrap launch: network', () => {
  const tools = { socat: '/usr/bin/socat', setpriv: '/usr/bin/setpriv', sleep: '/usr/bin/sleep' }
  const proxy = { kind: 'proxy' as const, socket: '/tmp/turnline-egress-x/run-1.sock', tools }

  it("never shares the host's network namespace, with or without the network", () => {
    for (const network of [
      false as const,
      proxy,
      { kind: 'unavailable' as const, reason: 'no socat' },
    ]) {
      const launch = bwrapLaunch(host([0, 8, 0]), limits, { ...spec, network })
      expect(launch.args).toContain('--unshare-all')
      expect(launch.args).not.toContain('--share-net')
    }
  })

  it('binds the command’s proxy socket, starts the relay before the command and sets the proxy variables', () => {
    const launch = bwrapLaunch(host([0, 8, 0]), limits, { ...spec, network: proxy })
    const at = launch.args.indexOf(proxy.socket)
    expect(launch.args.slice(at - 1, at + 2)).toEqual([
      '--bind',
      proxy.socket,
      '/run/turnline/egress.sock',
    ])
    const command = launch.args.slice(launch.args.lastIndexOf('--') + 1)
    expect(command.slice(0, 2)).toEqual(['sh', '-c'])
    expect(command[2]).toMatch(
      /setpriv --pdeathsig KILL \/usr\/bin\/socat -t 3600 TCP-LISTEN:3128,bind=127\.0\.0\.1/,
    )
    expect(command.slice(-3)).toEqual(spec.argv)
    expect(launch.env).toMatchObject({
      PATH: '/usr/bin',
      HTTP_PROXY: 'http://127.0.0.1:3128',
      https_proxy: 'http://127.0.0.1:3128',
      NO_PROXY: 'localhost,127.0.0.1,::1',
    })
  })

  it('without the relay, says so in the output and gives no proxy', () => {
    const network = { kind: 'unavailable' as const, reason: 'socat is not installed' }
    const launch = bwrapLaunch(host([0, 8, 0]), limits, { ...spec, network })
    expect(launch.args.join(' ')).toContain('this command has no network: socat is not installed')
    expect(launch.args).not.toContain('/run/turnline/egress.sock')
    expect(launch.env).toEqual(spec.env)
  })
})

describe('bubblewrap launch: seccomp filter', () => {
  const filter = new Uint8Array(16)

  it('passes the filter on the pipe after /etc/passwd and /etc/group, the status after it', () => {
    const launch = bwrapLaunch({ ...host([0, 8, 0]), seccompFilter: filter }, limits, spec)
    expect(launch.inputs).toHaveLength(3)
    expect(launch.inputs[2]).toBe(filter)
    expect(launch.statusFd).toBe(6)
    const args = launch.args.join(' ')
    expect(args).toContain('--seccomp 5 ')
    expect(args).toContain('--json-status-fd 6 ')
    expect(args).toContain('--ro-bind-data 3 /etc/passwd --ro-bind-data 4 /etc/group')
  })

  it('without a filter (no table for this architecture): no --seccomp, the status on 5', () => {
    const launch = bwrapLaunch(host([0, 8, 0]), limits, spec)
    expect(launch.inputs).toHaveLength(2)
    expect(launch.statusFd).toBe(5)
    expect(launch.args).not.toContain('--seccomp')
    expect(launch.args.join(' ')).toContain('--json-status-fd 5 ')
  })

  it("masks the memory of bubblewrap's init, which runs outside the filter", () => {
    const args = bwrapLaunch(host([0, 8, 0]), limits, spec).args.join(' ')
    expect(args).toContain(
      '--proc /proc --ro-bind /dev/null /proc/1/mem --ro-bind /dev/null /proc/1/task/1/mem --dev /dev',
    )
  })
})
