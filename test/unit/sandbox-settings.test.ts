import { describe, expect, it } from 'vitest'
import { commandEnv } from '../../adapters/runner/command-env.ts'
import { identityFiles, limitArgs } from '../../adapters/runner/sandbox-launch.ts'
import {
  DEFAULT_SANDBOX_SETTINGS,
  parseSandboxEnv,
} from '../../adapters/runner/sandbox-settings.ts'
import { ConfigError, parseEnv } from '../../functions/env-config.ts'

describe('sandbox settings', () => {
  it('default to bubblewrap where it works, network per session, an unprivileged user and limits', () => {
    const parsed = parseSandboxEnv({})
    expect(parsed).toEqual({ ok: true, settings: DEFAULT_SANDBOX_SETTINGS })
    expect(DEFAULT_SANDBOX_SETTINGS).toMatchObject({ mode: 'auto', network: 'session', uid: 65534 })
  })

  it('read every variable', () => {
    const parsed = parseSandboxEnv({
      TURNLINE_SANDBOX: 'require',
      TURNLINE_SANDBOX_NETWORK: 'off',
      TURNLINE_SANDBOX_UID: '1500',
      TURNLINE_SANDBOX_GID: '1501',
      TURNLINE_SANDBOX_MEMORY_MB: '512',
      TURNLINE_SANDBOX_CPU_SECONDS: '30',
      TURNLINE_SANDBOX_TIME_LIMIT_SECONDS: '90',
      TURNLINE_SANDBOX_MAX_PROCESSES: '64',
      TURNLINE_SANDBOX_FILE_SIZE_MB: '8',
      TURNLINE_SANDBOX_SPOOL_MB: '16',
      TURNLINE_SANDBOX_TENANT_COMMANDS: '4',
      TURNLINE_SANDBOX_TENANT_PROCESSES: '256',
      TURNLINE_SANDBOX_TENANT_MEMORY_MB: '2048',
      TURNLINE_SANDBOX_TENANT_DISK_MB: '500',
      TURNLINE_SANDBOX_DISK_CHECK_SECONDS: '5',
      TURNLINE_SANDBOX_DISK_WALK_TIMEOUT_MS: '30000',
      TURNLINE_SANDBOX_TENANT_UIDS: '300000-300999',
      TURNLINE_SANDBOX_CGROUPS: 'off',
      TURNLINE_SANDBOX_ENV: 'HTTP_PROXY, NPM_CONFIG_REGISTRY',
      TURNLINE_SANDBOX_READ_ONLY: '/opt/go,/srv/tools',
      TURNLINE_SANDBOX_PRIVATE_SPOOL_GRACE_SECONDS: '120',
      TURNLINE_EGRESS_ALLOW: 'mirror.internal:443',
      TURNLINE_EGRESS_DENY: '.corp',
      TURNLINE_EGRESS_DNS: '1.1.1.1',
    })
    expect(parsed).toEqual({
      ok: true,
      settings: {
        mode: 'require',
        network: 'off',
        uid: 1500,
        gid: 1501,
        limits: {
          memoryMb: 512,
          cpuSeconds: 30,
          timeLimitSeconds: 90,
          maxProcesses: 64,
          fileSizeMb: 8,
          spoolMb: 16,
        },
        tenant: {
          commands: 4,
          processes: 256,
          memoryMb: 2048,
          diskMb: 500,
          diskCheckSeconds: 5,
          diskWalkTimeoutMs: 30_000,
        },
        tenantUids: { first: 300000, last: 300999 },
        cgroups: 'off',
        passEnv: ['HTTP_PROXY', 'NPM_CONFIG_REGISTRY'],
        readOnlyPaths: ['/opt/go', '/srv/tools'],
        privateSpoolGraceSeconds: 120,
        egress: {
          allow: ['mirror.internal:443'],
          deny: ['.corp'],
          dnsServers: ['1.1.1.1'],
        },
      },
    })
  })

  it('tenant uids: a range, or off; a reversed or too low range is refused', () => {
    const off = parseSandboxEnv({ TURNLINE_SANDBOX_TENANT_UIDS: 'off' })
    expect(off.ok && off.settings.tenantUids).toBeNull()
    for (const bad of ['5000-4000', '10-2000', '1000', 'many']) {
      const parsed = parseSandboxEnv({ TURNLINE_SANDBOX_TENANT_UIDS: bad })
      expect(parsed.ok ? [] : parsed.problems).toEqual([
        expect.stringMatching(/^TURNLINE_SANDBOX_TENANT_UIDS: must be `off` or FIRST-LAST/),
      ])
    }
  })

  it('refuse uid 0, TURNLINE_* variables for commands, relative paths and unknown modes, naming the variable', () => {
    const parsed = parseSandboxEnv({
      TURNLINE_SANDBOX: 'maybe',
      TURNLINE_SANDBOX_UID: '0',
      TURNLINE_SANDBOX_ENV: 'HOME,TURNLINE_RUNNER_SECRET',
      TURNLINE_SANDBOX_READ_ONLY: 'opt/go',
    })
    if (parsed.ok) throw new Error('expected problems')
    const text = parsed.problems.join('\n')
    expect(text).toMatch(/^TURNLINE_SANDBOX:/m)
    expect(text).toMatch(/^TURNLINE_SANDBOX_UID:/m)
    expect(text).toMatch(/^TURNLINE_SANDBOX_ENV\.1: TURNLINE_\* variables/m)
    expect(text).toMatch(/^TURNLINE_SANDBOX_READ_ONLY\.0: must list absolute paths/m)
  })

  it('the server refuses an unsandboxed in-process runner with several tenants', () => {
    const keys = { TURNLINE_API_KEYS: 'acme-key-0123456789=acme' }
    expect(() => parseEnv({ ...keys, TURNLINE_SANDBOX: 'off' })).toThrow(ConfigError)
    expect(() => parseEnv({ ...keys, TURNLINE_SANDBOX: 'off' })).toThrow(
      /TURNLINE_SANDBOX: off is refused with TURNLINE_API_KEYS/,
    )
    // A runner elsewhere answers for its own isolation.
    expect(
      parseEnv({
        ...keys,
        TURNLINE_SANDBOX: 'off',
        TURNLINE_RUNNER_URL: 'http://127.0.0.1:8788',
        TURNLINE_RUNNER_SECRET: 'runner-secret-0123456789',
      }).TURNLINE_SANDBOX,
    ).toBe('off')
    expect(parseEnv({ TURNLINE_SANDBOX: 'off' }).TURNLINE_SANDBOX).toBe('off')
  })
})

describe('what a command is given', () => {
  it('an allow-listed environment: nothing of the runner’s but the names passed on', () => {
    const env = commandEnv({
      workspace: '/w',
      cwd: '/w/src',
      tty: false,
      execSessionId: 'run-abc',
      passEnv: ['HTTP_PROXY', 'MISSING'],
      source: { HTTP_PROXY: 'http://proxy:3128', OPENAI_API_KEY: 'sk-secret', PATH: '/root/bin' },
    })
    expect(env).toEqual({
      PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      HOME: '/w',
      PWD: '/w/src',
      TMPDIR: '/tmp',
      LANG: 'C.UTF-8',
      TERM: 'dumb',
      USER: 'sandbox',
      LOGNAME: 'sandbox',
      SHELL: '/bin/sh',
      HTTP_PROXY: 'http://proxy:3128',
      VTCODE_EXEC_SESSION_ID: 'run-abc',
    })
  })

  it('limits in bytes and seconds, SIGXCPU a second before SIGKILL', () => {
    expect(
      limitArgs('/usr/bin/prlimit', DEFAULT_SANDBOX_SETTINGS.limits, { processes: true }),
    ).toEqual([
      '/usr/bin/prlimit',
      `--as=${4096 * 1024 * 1024}`,
      '--cpu=600:601',
      `--fsize=${4096 * 1024 * 1024}`,
      '--nproc=512',
      '--',
    ])
  })

  it('a passwd with root and the sandbox user only', () => {
    const [passwd, group] = identityFiles(1500, 1501, '/w')
    expect(passwd).toBe(
      'root:x:0:0:root:/root:/usr/sbin/nologin\n' +
        'sandbox:x:1500:1501:Turnline sandbox:/w:/bin/sh\n' +
        'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n',
    )
    expect(group).toBe('root:x:0:\nsandbox:x:1501:\nnogroup:x:65534:\n')
  })
})
