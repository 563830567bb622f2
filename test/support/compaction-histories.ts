import type { HistoryMessage } from '../../src/contract/history-message.ts'

/** Deterministic transcripts for compaction tests and benchmarks. */

/** mulberry32: a small seeded PRNG. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS =
  'the build fails because the retry loop reads a stale token from the cache so we refresh it before each attempt and log the status code with the request id'.split(
    ' ',
  )

export function prose(random: () => number, words: number): string {
  const out: string[] = []
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(random() * WORDS.length)] as string)
  return out.join(' ')
}

export interface TurnShape {
  /** Tool rounds in the turn (assistant with calls + one tool message per call). */
  rounds: number
  callsPerRound: number
  /** Words per message. */
  words: number
  /** Leave the last round's calls unanswered (a turn cut off mid-tool-loop). */
  interrupted?: boolean
}

/** One user turn: user, tool rounds, and (unless interrupted) a closing assistant text. */
export function turn(index: number, shape: TurnShape, random: () => number): HistoryMessage[] {
  const messages: HistoryMessage[] = [
    { role: 'user', content: `task ${index}: ${prose(random, shape.words)}` },
  ]
  for (let r = 0; r < shape.rounds; r++) {
    const calls = Array.from({ length: shape.callsPerRound }, (_, c) => ({
      id: `call_${index}_${r}_${c}`,
      name: c % 2 === 0 ? 'read_file' : 'exec_command',
      arguments: JSON.stringify({ path: `src/file_${index}_${r}_${c}.ts` }),
    }))
    messages.push({ role: 'assistant', content: prose(random, 8), tool_calls: calls })
    const last = r === shape.rounds - 1
    if (last && shape.interrupted) return messages
    for (const call of calls) {
      messages.push({ role: 'tool', tool_call_id: call.id, content: prose(random, shape.words) })
    }
  }
  messages.push({ role: 'assistant', content: `done ${index}: ${prose(random, shape.words)}` })
  return messages
}

/** A transcript of `turns` ordinary turns, every shape drawn from the seed. */
export function scriptedHistory(seed: number, turns: number, words = 60): HistoryMessage[] {
  const random = seededRandom(seed)
  const history: HistoryMessage[] = []
  for (let i = 0; i < turns; i++) {
    history.push(
      ...turn(
        i,
        { rounds: Math.floor(random() * 4), callsPerRound: 1 + Math.floor(random() * 3), words },
        random,
      ),
    )
  }
  return history
}

/**
 * An adversarial transcript: besides ordinary turns it may hold interrupted tool loops, partially
 * answered calls, stray tool results, system messages, duplicate call ids, empty and huge messages.
 */
export function messyHistory(seed: number): HistoryMessage[] {
  const random = seededRandom(seed)
  const history: HistoryMessage[] = []
  if (random() < 0.3)
    history.push({
      role: 'system',
      content: `Previous conversation summary:\n${prose(random, 20)}`,
    })
  if (random() < 0.2)
    history.push({
      role: 'assistant',
      content: 'headless',
      tool_calls: [{ id: 'h', name: 'x', arguments: '{}' }],
    })
  const turns = 1 + Math.floor(random() * 25)
  for (let i = 0; i < turns; i++) {
    const words =
      random() < 0.05 ? 4000 + Math.floor(random() * 8000) : 5 + Math.floor(random() * 200)
    const messages = turn(
      i,
      {
        rounds: Math.floor(random() * 5),
        callsPerRound: 1 + Math.floor(random() * 4),
        words,
        interrupted: random() < 0.15,
      },
      random,
    )
    const roll = random()
    if (roll < 0.08) {
      // a partially answered round: drop one tool result
      const at = messages.findIndex((message) => message.role === 'tool')
      if (at >= 0) messages.splice(at, 1)
    } else if (roll < 0.14) {
      messages.push({ role: 'tool', tool_call_id: `stray_${i}`, content: 'late result' })
    } else if (roll < 0.18) {
      messages.splice(1, 0, { role: 'system', content: 'note' })
    } else if (roll < 0.21) {
      messages.push({
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'dup', name: 'x', arguments: '{}' },
          { id: 'dup', name: 'x', arguments: '{}' },
        ],
      })
      messages.push({ role: 'tool', tool_call_id: 'dup', content: 'once' })
    } else if (roll < 0.25) {
      messages.push({ role: 'user', content: '' })
    } else if (roll < 0.28) {
      messages.push({
        role: 'assistant',
        content: 'big args',
        tool_calls: [
          {
            id: `big_${i}`,
            name: 'write_file',
            arguments: JSON.stringify({ text: 'x'.repeat(30_000) }),
          },
        ],
      })
      messages.push({ role: 'tool', tool_call_id: `big_${i}`, content: 'ok' })
    }
    history.push(...messages)
  }
  return history
}

/** Single messages, for transcripts written out by hand. */
export const user = (content: string): HistoryMessage => ({ role: 'user', content })
export const say = (content: string): HistoryMessage => ({ role: 'assistant', content })
export const call = (...ids: string[]): HistoryMessage => ({
  role: 'assistant',
  content: '',
  tool_calls: ids.map((id) => ({ id, name: 'read_file', arguments: '{"path":"a"}' })),
})
export const result = (id: string, content = 'ok'): HistoryMessage => ({
  role: 'tool',
  tool_call_id: id,
  content,
})
