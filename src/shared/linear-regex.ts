/**
 * Regular expressions matched in time linear in the subject, whatever the pattern: a Thompson
 * construction run as a Pike VM (every thread advances one character at a time, a state is
 * entered at most once per position), so `(a+)+$` against a long line of `a`s costs
 * O(pattern × line), never the exponential backtracking of JavaScript's engine. For patterns a
 * tenant (or its model) writes and the service runs on every runtime — Workers and Deno have no
 * V8 flag that bounds backtracking.
 *
 * The syntax is JavaScript's without what needs backtracking: literals and escapes (`\n`, `\t`,
 * `\xHH`, `\uHHHH`, escaped punctuation), `.`, classes `[a-z]` / `[^…]`, `\d \D \w \W \s \S`,
 * `^ $ \b \B`, groups `(…)`, `(?:…)`, `(?<name>…)`, alternation, and `* + ? {n} {n,} {n,m}`
 * (greedy or lazy). Back-references and lookarounds are refused with a `LinearRegexError`. The
 * leftmost match wins, with JavaScript's preference among the alternatives at that position.
 */

import {
  type AssertKind,
  isWord,
  LinearRegexError,
  type Node,
  Parser,
  type Test,
} from './linear-regex-parser.ts'

export { LinearRegexError } from './linear-regex-parser.ts'

type Op =
  | { op: 'char'; test: Test }
  | { op: 'split'; x: number; y: number }
  | { op: 'jmp'; x: number }
  | { op: 'assert'; kind: AssertKind }
  | { op: 'match' }

/** The most instructions a pattern may compile to. */
const MAX_PROGRAM = 20_000

function compile(root: Node): Op[] {
  const program: Op[] = []
  const emit = (op: Op): number => {
    if (program.length >= MAX_PROGRAM) {
      throw new LinearRegexError(`the pattern is too large (over ${MAX_PROGRAM} steps)`)
    }
    program.push(op)
    return program.length - 1
  }
  const split = (greedy: boolean, body: number, out: number) =>
    greedy ? { op: 'split' as const, x: body, y: out } : { op: 'split' as const, x: out, y: body }
  const walk = (node: Node): void => {
    switch (node.t) {
      case 'char':
        emit({ op: 'char', test: node.test })
        return
      case 'assert':
        emit({ op: 'assert', kind: node.kind })
        return
      case 'seq':
        for (const item of node.items) walk(item)
        return
      case 'alt': {
        const jumps: number[] = []
        const last = node.items.length - 1
        node.items.forEach((item, i) => {
          if (i === last) {
            walk(item)
            return
          }
          const at = emit({ op: 'split', x: 0, y: 0 })
          walk(item)
          jumps.push(emit({ op: 'jmp', x: 0 }))
          program[at] = { op: 'split', x: at + 1, y: program.length }
        })
        for (const jump of jumps) program[jump] = { op: 'jmp', x: program.length }
        return
      }
      case 'repeat': {
        for (let i = 0; i < node.min; i++) walk(node.node)
        if (node.max === Number.POSITIVE_INFINITY) {
          const at = emit({ op: 'split', x: 0, y: 0 })
          walk(node.node)
          emit({ op: 'jmp', x: at })
          program[at] = split(node.greedy, at + 1, program.length)
          return
        }
        const splits: number[] = []
        for (let i = node.min; i < node.max; i++) {
          splits.push(emit({ op: 'split', x: 0, y: 0 }))
          walk(node.node)
        }
        for (const at of splits) program[at] = split(node.greedy, at + 1, program.length)
      }
    }
  }
  walk(root)
  emit({ op: 'match' })
  return program
}

/**
 * Steps (a program step entered at a position) a search may take for each character it reads.
 * Linear is not enough: `.{0,1000}x` enters ~2,000 steps at every position, 8 s of the event
 * loop for a 64 KiB line; the searches people write take 1–20 (a log line, a command).
 */
const STEPS_PER_CHARACTER = 32

/**
 * What a search may still spend, shared by the searches of one call over many subjects (the
 * lines of an output, the commands of a session): it starts at twice the program's size and
 * every character read (and each subject's end) adds {@link STEPS_PER_CHARACTER}.
 */
export interface StepBudget {
  steps: number
}

/** A compiled pattern: `exec` finds the leftmost match in a string. */
export interface LinearRegex {
  /**
   * The leftmost match; throws LinearRegexError once the search spends more than its budget
   * (without one, a budget of its own): the pattern costs too much against such text.
   */
  exec(subject: string, budget?: StepBudget): { index: number; end: number } | undefined
  /** A new budget for searching several subjects. */
  budget(): StepBudget
}

/** Compiles `pattern`; throws LinearRegexError for syntax it does not support or cannot parse. */
export function linearRegex(pattern: string, options: { ignoreCase?: boolean } = {}): LinearRegex {
  const program = compile(new Parser(pattern, options.ignoreCase === true).parse())
  const budget = () => ({ steps: 2 * program.length })
  return { exec: (subject, given = budget()) => run(program, subject, given), budget }
}

/** Why `pattern` cannot be compiled (its LinearRegexError's message), or undefined. */
export function linearRegexProblem(pattern: string): string | undefined {
  try {
    linearRegex(pattern)
    return undefined
  } catch (error) {
    if (error instanceof LinearRegexError) return error.message
    throw error
  }
}

function holds(kind: AssertKind, s: string, at: number): boolean {
  if (kind === 'bol') return at === 0
  if (kind === 'eol') return at === s.length
  const before = at > 0 && isWord(s.charCodeAt(at - 1))
  const after = at < s.length && isWord(s.charCodeAt(at))
  return (before !== after) === (kind === 'word')
}

/**
 * The Pike VM: threads in priority order, each program step entered at most once per position
 * (`seen`), so the work is O(program × subject), and at most what `budget` allows. The leftmost
 * match wins; among the threads that started there, the one of highest priority (JavaScript's
 * choice).
 */
function run(
  program: Op[],
  s: string,
  budget: StepBudget,
): { index: number; end: number } | undefined {
  const seen = new Int32Array(program.length).fill(-1)
  let current: { pc: number; start: number }[] = []
  let found: { index: number; end: number } | undefined
  const add = (list: typeof current, pc: number, start: number, at: number) => {
    const stack = [pc]
    while (stack.length > 0) {
      const next = stack.pop() as number
      if (seen[next] === at) continue
      seen[next] = at
      if (--budget.steps < 0) {
        throw new LinearRegexError(
          `the pattern needs more than ${STEPS_PER_CHARACTER} steps a character on this text: write a simpler one`,
        )
      }
      const op = program[next] as Op
      if (op.op === 'jmp') stack.push(op.x)
      else if (op.op === 'split') stack.push(op.y, op.x)
      else if (op.op === 'assert') {
        if (holds(op.kind, s, at)) stack.push(next + 1)
      } else list.push({ pc: next, start })
    }
  }
  for (let at = 0; at <= s.length; at++) {
    // Earned as the search reads: a pattern that costs too much a character fails early on.
    budget.steps += STEPS_PER_CHARACTER
    if (!found) add(current, 0, at, at)
    if (current.length === 0) {
      if (found) break
      continue // nothing started here (an assertion failed): try the next position
    }
    const following: typeof current = []
    const code = at < s.length ? s.charCodeAt(at) : -1
    for (const thread of current) {
      const op = program[thread.pc] as Op
      if (op.op === 'match') {
        found = { index: thread.start, end: at }
        break // lower-priority threads lose to this match
      }
      if (op.op === 'char' && code >= 0 && op.test(code))
        add(following, thread.pc + 1, thread.start, at + 1)
    }
    current = following
  }
  return found
}
