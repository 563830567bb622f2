import { describe, expect, it } from 'vitest'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import { protocolViolations } from '../../src/core/compaction/protocol-groups.ts'
import {
  completeProviderCompaction,
  sendableWindow,
} from '../../src/core/compaction/provider-compaction.ts'
import { call, result, say, user } from '../support/compaction-histories.ts'

/**
 * The window a provider compaction returns is made sendable wherever it breaks the tool-call
 * protocol, not only at its end: a call without its result in the middle (a crash between them,
 * or a cut the provider made) is rejected by the provider when the next request carries it.
 */
const item: HistoryMessage = {
  role: 'compaction',
  provider: 'openai',
  content: '',
  encrypted_content: 'enc',
}

describe('the window of a provider compaction', () => {
  it('leaves out a broken call/result pair in the middle of the window', () => {
    const output = [
      user('one'),
      call('a', 'b'),
      result('a'), // b never answered
      user('two'),
      result('x'), // answers nothing
      call('c'),
      result('c'),
      result('c'), // a second answer
      say('done'),
      call('d', 'd'), // one id twice
      result('d'),
      user('three'),
      item,
    ]
    const { base } = completeProviderCompaction(output, [], [])
    expect(protocolViolations(base)).toEqual([])
    expect(base).toEqual([
      user('one'),
      user('two'),
      call('c'),
      result('c'),
      say('done'),
      user('three'),
      item,
    ])
  })

  it('keeps a window that keeps the protocol as it is, and still drops a trailing call', () => {
    const whole = [user('one'), call('a', 'b'), result('b'), result('a'), say('ok'), item]
    expect(sendableWindow(whole)).toEqual(whole)
    expect(sendableWindow([...whole, call('z')])).toEqual(whole)
    expect(sendableWindow([...whole, call('y'), call('z')])).toEqual(whole)
  })

  it('reads each message a bounded number of times, however many pairs break', () => {
    const output: HistoryMessage[] = []
    for (let n = 0; n < 5_000; n++) {
      output.push(user(`u${n}`), call(`a${n}`, `b${n}`), result(`a${n}`), result(`z${n}`))
    }
    const wide = Array.from({ length: 5_000 }, (_, n) => `w${n}`)
    output.push(call(...wide), ...wide.map((id) => result(id)))
    let reads = 0
    const counted = new Proxy(output, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads += 1
        return Reflect.get(target, key, receiver)
      },
    })
    const kept = sendableWindow(counted)
    expect(kept).toHaveLength(5_000 + 1 + 5_000)
    expect(protocolViolations(kept)).toEqual([])
    expect(reads).toBeLessThan(3 * output.length)
  })
})
