import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  AUDIT_ARCH,
  ERRNO,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
  seccompArch,
  seccompFilter,
  seccompProgram,
  X32_SYSCALL_BIT,
} from '../../adapters/runner/seccomp-filter.ts'
import { DENIED_SYSCALLS, type SeccompArch } from '../../adapters/runner/seccomp-syscalls.ts'
import { runSeccomp } from '../support/seccomp-interpreter.ts'

const ARCHES: SeccompArch[] = ['x86_64', 'aarch64']
/** Ordinary calls: read, write, getpid, openat, execve. */
const ORDINARY: Record<SeccompArch, number[]> = {
  x86_64: [0, 1, 39, 257, 59],
  aarch64: [63, 64, 172, 56, 221],
}
const PTRACE = { x86_64: 101, aarch64: 117 }
const UNSHARE = { x86_64: 272, aarch64: 97 }
const CLONE = { x86_64: 56, aarch64: 220 }

/** `#define __NR_<name> <n>` of the kernel's UAPI headers (Debian: linux-libc-dev). */
function headerNumbers(candidates: string[]): Map<string, number> {
  const file = candidates.find((path) => existsSync(path))
  if (!file) {
    throw new Error(
      `no system call header at ${candidates.join(' or ')}: install linux-libc-dev ` +
        '(and linux-libc-dev-amd64-cross on a host that is not x86_64)',
    )
  }
  const numbers = new Map<string, number>()
  for (const m of readFileSync(file, 'utf8').matchAll(/^#define __NR(?:3264)?_(\w+)\s+(\d+)/gm)) {
    numbers.set(m[1] ?? '', Number(m[2]))
  }
  return numbers
}

const HEADERS: Record<SeccompArch, string[]> = {
  x86_64: [
    '/usr/include/x86_64-linux-gnu/asm/unistd_64.h',
    '/usr/x86_64-linux-gnu/include/asm/unistd_64.h',
  ],
  aarch64: ['/usr/include/asm-generic/unistd.h'],
}

describe('the seccomp filter', () => {
  it.each(ARCHES)('numbers every call as the kernel headers do (%s)', (arch) => {
    const header = headerNumbers(HEADERS[arch])
    expect(header.get('getpid')).toBe(ORDINARY[arch][2])
    const newest = Math.max(...header.values())
    for (const call of DENIED_SYSCALLS) {
      const nr = call.nr[arch]
      const known = header.get(call.name)
      if (known !== undefined) expect(nr, call.name).toBe(known)
      // Newer than these headers: then a number past their last one, shared by all architectures.
      else if (nr !== undefined) expect(nr, call.name).toBeGreaterThan(newest)
    }
  })

  it.each(ARCHES)('denies each call with its errno and allows ordinary ones (%s)', (arch) => {
    const program = seccompProgram(arch)
    const run = (nr: number, args: bigint[] = []) =>
      runSeccomp(program, { arch: AUDIT_ARCH[arch], nr, args })
    for (const call of DENIED_SYSCALLS) {
      const nr = call.nr[arch]
      if (nr === undefined || call.only) continue
      expect(run(nr), call.name).toBe(SECCOMP_RET_ERRNO | ERRNO[call.errno])
    }
    for (const nr of ORDINARY[arch]) expect(run(nr)).toBe(SECCOMP_RET_ALLOW)
    const eperm = SECCOMP_RET_ERRNO | ERRNO.EPERM
    // ptrace: attaching to another process is denied; being traced by one's parent is not.
    expect(run(PTRACE[arch], [16n, 1n])).toBe(eperm)
    expect(run(PTRACE[arch], [0x4206n, 1n])).toBe(eperm)
    expect(run(PTRACE[arch], [0x1_0000_0010n, 1n])).toBe(eperm)
    expect(run(PTRACE[arch], [0n])).toBe(SECCOMP_RET_ALLOW)
    expect(run(PTRACE[arch], [3n, 1n])).toBe(SECCOMP_RET_ALLOW)
    // New namespaces: denied; unsharing files or forking with a signal: allowed.
    expect(run(UNSHARE[arch], [0x40000000n])).toBe(eperm)
    expect(run(UNSHARE[arch], [0x80n])).toBe(eperm)
    expect(run(UNSHARE[arch], [0x400n])).toBe(SECCOMP_RET_ALLOW)
    expect(run(CLONE[arch], [0x20000000n | 17n])).toBe(eperm)
    expect(run(CLONE[arch], [0x01200011n])).toBe(SECCOMP_RET_ALLOW)
  })

  it('ends a process calling through another ABI (i386, AArch32, x32)', () => {
    const x86 = seccompProgram('x86_64')
    const arm = seccompProgram('aarch64')
    expect(runSeccomp(x86, { arch: 0x40000003, nr: 20 })).toBe(SECCOMP_RET_KILL_PROCESS)
    expect(runSeccomp(arm, { arch: 0x40000028, nr: 20 })).toBe(SECCOMP_RET_KILL_PROCESS)
    expect(runSeccomp(x86, { arch: AUDIT_ARCH.aarch64, nr: 39 })).toBe(SECCOMP_RET_KILL_PROCESS)
    const x32 = { arch: AUDIT_ARCH.x86_64, nr: X32_SYSCALL_BIT | 39 }
    expect(runSeccomp(x86, x32)).toBe(SECCOMP_RET_KILL_PROCESS)
    // -1, a call a tracer skipped, is left to the kernel (ENOSYS).
    expect(runSeccomp(x86, { arch: AUDIT_ARCH.x86_64, nr: -1 })).toBe(SECCOMP_RET_ALLOW)
  })

  it('is laid out as struct sock_filter[] (8 bytes each, little-endian)', () => {
    const program = seccompProgram('x86_64')
    const bytes = seccompFilter('x86_64')
    expect(bytes.byteLength).toBe(program.length * 8)
    const view = new DataView(bytes.buffer)
    expect(view.getUint16(0, true)).toBe(0x20)
    expect(view.getUint32(4, true)).toBe(4)
    expect(view.getUint32(12, true)).toBe(AUDIT_ARCH.x86_64)
    const last = (program.length - 1) * 8
    expect(view.getUint32(last + 4, true)).toBe(SECCOMP_RET_ALLOW)
  })

  it('has a table for x86_64 and aarch64 only', () => {
    expect(seccompArch('x64', 'LE')).toBe('x86_64')
    expect(seccompArch('arm64', 'LE')).toBe('aarch64')
    expect(seccompArch('riscv64', 'LE')).toBeUndefined()
    expect(seccompArch('arm64', 'BE')).toBeUndefined()
  })

  it('every denied call is named in the configuration docs', () => {
    const docs = readFileSync(join(import.meta.dirname, '../../docs/configuration.md'), 'utf8')
    for (const call of DENIED_SYSCALLS) expect(docs, call.name).toContain(`\`${call.name}\``)
  })
})
