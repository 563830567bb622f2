import type { BpfInstruction } from '../../adapters/runner/seccomp-filter.ts'

/** What a seccomp filter is shown: `struct seccomp_data` with 64-bit arguments. */
export interface SeccompData {
  nr: number
  arch: number
  args?: bigint[]
}

/** The 32-bit word of `struct seccomp_data` (little-endian) at a byte offset. */
function word(data: SeccompData, offset: number): number {
  if (offset === 0) return data.nr >>> 0
  if (offset === 4) return data.arch >>> 0
  if (offset < 16 || offset >= 64 || offset % 4 !== 0) throw new Error(`bad load at ${offset}`)
  const arg = BigInt.asUintN(64, data.args?.[(offset - 16) >> 3] ?? 0n)
  return Number(offset % 8 === 0 ? arg & 0xffffffffn : arg >> 32n)
}

/**
 * Runs a classic BPF seccomp program as the kernel does, for the instructions the filter
 * generator emits (load word, jeq/jge/jset with a constant, return), and returns the action.
 * Any other instruction, or running off the end, throws.
 */
export function runSeccomp(program: readonly BpfInstruction[], data: SeccompData): number {
  let a = 0
  for (let pc = 0; pc < program.length; pc++) {
    const insn = program[pc]
    if (!insn) break
    const branch = (taken: boolean) => {
      pc += taken ? insn.jt : insn.jf
    }
    switch (insn.code) {
      case 0x20:
        a = word(data, insn.k)
        break
      case 0x15:
        branch(a === insn.k >>> 0)
        break
      case 0x35:
        branch(a >>> 0 >= insn.k >>> 0)
        break
      case 0x45:
        branch((a & insn.k) !== 0)
        break
      case 0x06:
        return insn.k >>> 0
      default:
        throw new Error(`unexpected BPF code ${insn.code.toString(16)} at ${pc}`)
    }
  }
  throw new Error('the program ran off its end')
}
