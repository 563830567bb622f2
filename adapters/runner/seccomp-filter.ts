import { endianness } from 'node:os'
import { DENIED_SYSCALLS, type DeniedSyscall, type SeccompArch } from './seccomp-syscalls.ts'

/**
 * The command sandbox's seccomp filter as a classic BPF program (`struct sock_filter[]`, the
 * format bubblewrap's `--seccomp <fd>` reads): the architecture first — another ABI (i386 on
 * x86_64, AArch32 on aarch64, x32) ends the process, since its numbers mean other calls — then
 * every denied call (`seccomp-syscalls.ts`) returns its errno, and everything else is allowed.
 */

/** One instruction: `{ code: u16, jt: u8, jf: u8, k: u32 }`. */
export interface BpfInstruction {
  code: number
  jt: number
  jf: number
  k: number
}

/** AUDIT_ARCH_* of `struct seccomp_data.arch`. */
export const AUDIT_ARCH: Record<SeccompArch, number> = {
  x86_64: 0xc000003e,
  aarch64: 0xc00000b7,
}
/** x32 calls reach the x86_64 entry with this bit set in their number. */
export const X32_SYSCALL_BIT = 0x40000000
export const SECCOMP_RET_KILL_PROCESS = 0x80000000
export const SECCOMP_RET_ERRNO = 0x00050000
export const SECCOMP_RET_ALLOW = 0x7fff0000
export const ERRNO: Record<DeniedSyscall['errno'], number> = { EPERM: 1, ENOSYS: 38 }

/** Offsets in `struct seccomp_data`: nr, arch, then args[6] (u64 each) from 16. */
const NR = 0
const ARCH = 4
/** The low 32 bits of argument `index` (both architectures are little-endian). */
const argLow = (index: number) => 16 + 8 * index

const BPF_LD_W_ABS = 0x20
const BPF_JEQ_K = 0x15
const BPF_JGE_K = 0x35
const BPF_JSET_K = 0x45
const BPF_RET_K = 0x06

const load = (offset: number): BpfInstruction => ({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: offset })
const jump = (code: number, k: number, jt: number, jf: number): BpfInstruction => ({
  code,
  jt,
  jf,
  k: k >>> 0,
})
const ret = (k: number): BpfInstruction => ({ code: BPF_RET_K, jt: 0, jf: 0, k: k >>> 0 })
const deny = (call: DeniedSyscall) => ret(SECCOMP_RET_ERRNO | ERRNO[call.errno])

/** The architecture of this host's filter, or undefined where there is no table for it. */
export function seccompArch(
  arch: string = process.arch,
  byteOrder: string = endianness(),
): SeccompArch | undefined {
  if (byteOrder !== 'LE') return undefined
  if (arch === 'x64') return 'x86_64'
  if (arch === 'arm64') return 'aarch64'
  return undefined
}

/** One denied call: `nr` → its errno (or, for `only`, a look at the argument first). */
function rule(call: DeniedSyscall, nr: number): BpfInstruction[] {
  const only = call.only
  if (!only) return [jump(BPF_JEQ_K, nr, 0, 1), deny(call)]
  // Each test jumps over the rest of them and the allow, to the deny.
  const tests =
    'equals' in only
      ? only.equals.map((value, i, all) => jump(BPF_JEQ_K, value, all.length - i, 0))
      : [jump(BPF_JSET_K, only.anyBit, 1, 0)]
  const block = [load(argLow(only.arg)), ...tests, ret(SECCOMP_RET_ALLOW), deny(call)]
  return [jump(BPF_JEQ_K, nr, 0, block.length), ...block]
}

export function seccompProgram(arch: SeccompArch): BpfInstruction[] {
  const program = [
    load(ARCH),
    jump(BPF_JEQ_K, AUDIT_ARCH[arch], 1, 0),
    ret(SECCOMP_RET_KILL_PROCESS),
    load(NR),
  ]
  if (arch === 'x86_64') {
    // x32 numbers, except -1 (a tracer skipping a call), which the kernel answers ENOSYS.
    program.push(
      jump(BPF_JGE_K, X32_SYSCALL_BIT, 0, 2),
      jump(BPF_JEQ_K, 0xffffffff, 1, 0),
      ret(SECCOMP_RET_KILL_PROCESS),
    )
  }
  for (const call of DENIED_SYSCALLS) {
    const nr = call.nr[arch]
    if (nr !== undefined) program.push(...rule(call, nr))
  }
  program.push(ret(SECCOMP_RET_ALLOW))
  return program
}

/** The program in the kernel's layout (8 bytes an instruction, little-endian). */
export function seccompFilter(arch: SeccompArch): Uint8Array {
  const program = seccompProgram(arch)
  const bytes = new Uint8Array(program.length * 8)
  const view = new DataView(bytes.buffer)
  program.forEach((insn, i) => {
    if (insn.jt > 255 || insn.jf > 255) throw new Error(`seccomp: jump too far at ${i}`)
    view.setUint16(i * 8, insn.code, true)
    view.setUint8(i * 8 + 2, insn.jt)
    view.setUint8(i * 8 + 3, insn.jf)
    view.setUint32(i * 8 + 4, insn.k, true)
  })
  return bytes
}
