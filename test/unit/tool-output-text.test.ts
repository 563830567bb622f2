import { describe, expect, it } from 'vitest'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { EventDispatcher } from '../../src/core/engine/event-dispatcher.ts'
import { execResponse } from '../../src/core/sandbox/exec-response.ts'
import { toolOutputPayload } from '../../src/core/tools/tool-output-text.ts'
import { recordToolResult } from '../../src/core/tools/tool-result.ts'

const json = (value: unknown) => JSON.stringify(value)

describe('toolOutputPayload (what a tool_output item shows)', () => {
  it('a spooled answer shows "" and the spool path, whatever else it holds', () => {
    expect(
      toolOutputPayload(json({ success: true, output: 'head', spool_path: '.vtcode/x.txt' })),
    ).toEqual({ text: '', spoolPath: '.vtcode/x.txt' })
  })

  it('takes output, stdout, stderr and content, trimmed, each once', () => {
    expect(toolOutputPayload(json({ output: ' a \n', stdout: 'b', stderr: 'a', x: 1 }))).toEqual({
      text: 'a\nb',
    })
    expect(toolOutputPayload(json({ content: 'file body' }))).toEqual({ text: 'file body' })
  })

  it('without text: a field summary, the error and the notes', () => {
    expect(toolOutputPayload(json({ success: false, error: 'no such session' }))).toEqual({
      text: 'Structured result with fields: error\nno such session',
    })
    expect(
      toolOutputPayload(json({ success: true, a: 1, b: 2, c: 3, d: 4, e: 5, hint: 'retry' })),
    ).toEqual({ text: 'Structured result with fields: a, b, c, d\nretry' })
    expect(toolOutputPayload(json({ error: { message: 'boom' }, output: '' }))).toEqual({
      text: 'Structured result with fields: error, output\nboom',
    })
  })

  it('summarizes lists of items, files, matches and results', () => {
    expect(
      toolOutputPayload(
        json({
          items: [
            { type: 'file', path: 'a.ts' },
            { type: 'directory', path: 'src' },
          ],
        }),
      ).text,
    ).toBe('Listed 2 items (1 file, 1 directory): a.ts, src')
    expect(toolOutputPayload(json({ files: ['x', 'y'], total: 9 })).text).toBe(
      'Listed 9 files: x, y',
    )
    expect(toolOutputPayload(json({ matches: [] })).text).toBe('No matches found')
    expect(
      toolOutputPayload(json({ matches: [{ path: 'a' }, { file: 'b' }, { path: 'a' }] })).text,
    ).toBe('Found 3 matches in a, b')
    expect(
      toolOutputPayload(json({ query: 'fn', results: [{ path: 'a.rs', line: 3 }] })).text,
    ).toBe('Returned 1 result for `fn`: a.rs:3')
  })

  it('plain text, arrays and scalars are shown as they are', () => {
    expect(toolOutputPayload('Created a.txt (3 bytes)')).toEqual({
      text: 'Created a.txt (3 bytes)',
    })
    expect(toolOutputPayload('[1,2]')).toEqual({ text: '[1,2]' })
    expect(toolOutputPayload('{not json')).toEqual({ text: '{not json' })
  })
})

describe('recordToolResult', () => {
  const call = {
    item_id: 'item_0',
    tool_call_id: 'call_0',
    tool_name: 'exec_command',
    arguments: '{}',
  }

  function record(output: string, status: 'completed' | 'failed', exitCode?: number) {
    const dispatcher = new EventDispatcher(0)
    const history: HistoryMessage[] = []
    recordToolResult(
      dispatcher,
      history,
      call,
      status,
      status === 'failed' ? 'error' : 'success',
      output,
      {
        ...(exitCode !== undefined ? { exitCode } : {}),
      },
    )
    return { events: dispatcher.take() as ThreadEvent[], history }
  }

  it('an exec answer: the item holds its output text, the model the whole JSON', () => {
    const answer = execResponse(
      {
        execSessionId: 'run-1',
        requestId: 'r',
        toolCallId: 'call_0',
        command: 'false',
        workdir: '.',
        backend: 'pipe',
        state: { status: 'exited', exitCode: 1 },
        attached: false,
        output: { from: 0, to: 5, head: 'nope\n', tail: '', omittedBytes: 0 },
        totalOutputBytes: 5,
        spool: { path: '.vtcode/context/tool_outputs/write_stdin_run-1.txt', complete: true },
        wallTimeMs: 3,
      },
      { maxOutputTokens: 100 },
    )
    const { events, history } = record(JSON.stringify(answer), 'failed', 1)
    expect(events.at(-1)).toEqual({
      type: 'item.completed',
      item: {
        id: 'item_0:output',
        type: 'tool_output',
        call_id: 'item_0',
        tool_call_id: 'call_0',
        output: 'nope',
        exit_code: 1,
        status: 'failed',
      },
    })
    expect(JSON.parse(history[0]?.content ?? '')).toMatchObject({ exit_code: 1 })
  })

  it('a spooled answer: output "" and spool_path', () => {
    const { events } = record(json({ output: 'x'.repeat(10), spool_path: 'a/b.txt' }), 'completed')
    expect(events.at(-1)).toMatchObject({ item: { output: '', spool_path: 'a/b.txt' } })
  })
})
