/**
 * A server's V8 CPU profile (`--cpu-prof`) ranked function by function over the measured turns
 * only: the samples taken inside the turns `bench/turn-cost-pairs.ts --windows <file>` wrote for
 * that server (`--variant`, its place in `--revisions`), idle samples left out. Prints, per
 * measured turn, the functions by self time (a builtin such as JSON.stringify counts in the
 * function that called it) and the project's own functions by inclusive time (each counted once
 * per sample however often it recurs; a middleware's inclusive time holds the routes it awaited
 * synchronously). The profiler samples by wall clock: a syscall counts for the time the thread
 * waits in it.
 *
 *   npx tsx bench/turn-cost-pairs.ts --revisions . --sessions 40 --windows w.json \
 *     --node-args='--cpu-prof --cpu-prof-dir=prof --cpu-prof-interval=100'
 *   npx tsx bench/profile-functions.ts --profile prof/CPU….001.cpuprofile --windows w.json
 *                                      [--variant 0] [--top 40] [--calls <regexp>]
 *
 * `--calls` adds, for the outermost frame matching the expression, what its time went to: the
 * frame each of its samples has right below it.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
}
interface ProfileNode {
  id: number
  callFrame: CallFrame
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

const { values } = parseArgs({
  options: {
    profile: { type: 'string' },
    windows: { type: 'string' },
    variant: { type: 'string', default: '0' },
    top: { type: 'string', default: '40' },
    calls: { type: 'string' },
  },
})
if (!values.profile || !values.windows) throw new Error('--profile and --windows are required')
const profile = JSON.parse(readFileSync(values.profile, 'utf8')) as Profile
const variant = Number(values.variant)
// Turn windows in µs, the unit of the profile's clock, in order.
const windows = (JSON.parse(readFileSync(values.windows, 'utf8')) as [number, string, string][])
  .filter(([i]) => i === variant)
  .map(([, start, end]) => [Number(BigInt(start) / 1000n), Number(BigInt(end) / 1000n)] as const)
  .sort((a, b) => a[0] - b[0])
const turns = windows.length

const nodes = new Map<number, ProfileNode>()
const parent = new Map<number, number>()
for (const node of profile.nodes) {
  nodes.set(node.id, node)
  for (const child of node.children ?? []) parent.set(child, node.id)
}
const inTurn = (at: number): boolean => {
  let lo = 0
  let hi = windows.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const [start, end] = windows[mid] as readonly [number, number]
    if (end < at) lo = mid + 1
    else if (start > at) hi = mid - 1
    else return true
  }
  return false
}
const where = (url: string) =>
  url
    .replace(/^file:\/\//, '')
    .replace(/.*\/node_modules\//, 'node_modules/')
    .replace(/^\/.*?\/(src|adapters|functions|bench|infra)\//, '$1/')
const nameOf = ({ functionName, url, lineNumber }: CallFrame) =>
  `${functionName || '(anonymous)'} ${where(url)}${url ? `:${lineNumber + 1}` : ''}`
const ours = (url: string) =>
  !url.includes('/node_modules/') && /\/(src|adapters|functions)\//.test(url)
/** The frames of a sample's stack, innermost first. */
const stackOf = (id: number): CallFrame[] => {
  const frames: CallFrame[] = []
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    frames.push((nodes.get(at) as ProfileNode).callFrame)
  }
  return frames
}

const self = new Map<string, number>()
const inclusive = new Map<string, number>()
const below = new Map<string, number>()
const calls = values.calls === undefined ? undefined : new RegExp(values.calls)
const add = (map: Map<string, number>, key: string, us: number) =>
  map.set(key, (map.get(key) ?? 0) + us)
let busy = 0
let at = profile.startTime
for (let k = 0; k < profile.samples.length; k++) {
  at += profile.timeDeltas[k] ?? 0
  const us = profile.timeDeltas[k + 1] ?? 0
  if (!inTurn(at)) continue
  const stack = stackOf(profile.samples[k] as number)
  const leaf = stack[0] as CallFrame
  if (leaf.functionName === '(idle)') continue
  busy += us
  add(self, nameOf(leaf), us)
  const counted = new Set<string>()
  for (const frame of stack) {
    const name = nameOf(frame)
    if (ours(frame.url) && !counted.has(name)) {
      counted.add(name)
      add(inclusive, name, us)
    }
  }
  if (calls) {
    const outer = stack.findLastIndex((frame) => calls.test(nameOf(frame)))
    if (outer >= 0) add(below, outer === 0 ? '(self)' : nameOf(stack[outer - 1] as CallFrame), us)
  }
}

const top = Number(values.top)
const print = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}`)
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const share = ((100 * us) / busy).toFixed(1)
    console.log(`${(us / turns).toFixed(0).padStart(6)} µs/turn ${share.padStart(5)} %  ${name}`)
  }
}
console.log(
  `${turns} measured turns; the main thread busy in them ${(busy / turns / 1000).toFixed(2)} ms a turn`,
)
print('by self time', self)
print("the project's own functions by inclusive time", inclusive)
if (calls) print(`what the outermost ${values.calls} spent its time in`, below)
