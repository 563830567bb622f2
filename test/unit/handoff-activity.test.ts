import { describe, expect, it } from 'vitest'
import { DEFAULT_TEST_COMMAND_PATTERN, HarnessSchema } from '../../src/contract/harness-config.ts'
import { readSessionConfig } from '../../src/contract/session-config.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { buildHandoff } from '../../src/core/handoff/build-handoff.ts'
import {
  lastTestRun,
  renderTestRun,
  sessionActivity,
} from '../../src/core/handoff/session-activity.ts'
import { linearRegex } from '../../src/shared/linear-regex.ts'

let n = 0
function tool(name: string, answer: object | string): ThreadEvent[] {
  const id = `item_${n++}`
  return [
    {
      type: 'item.completed',
      item: {
        id,
        type: 'tool_invocation',
        tool_name: name,
        status: 'completed',
        outcome: 'success',
      },
    },
    {
      type: 'item.completed',
      item: {
        id: `${id}:output`,
        type: 'tool_output',
        call_id: id,
        output: typeof answer === 'string' ? answer : JSON.stringify(answer),
        status: 'completed',
      },
    },
  ]
}
const change = (changes: { path: string; kind: 'add' | 'update' | 'delete' }[]): ThreadEvent => ({
  type: 'item.completed',
  item: { id: `item_${n++}`, type: 'file_change', changes, status: 'completed' },
})

describe('session activity', () => {
  it('lists modified files in first-touch order with their net kind', () => {
    const activity = sessionActivity([
      change([{ path: 'a.ts', kind: 'add' }]),
      change([
        { path: 'b.ts', kind: 'update' },
        { path: 'a.ts', kind: 'update' },
      ]),
      change([{ path: 'b.ts', kind: 'delete' }]),
    ])
    expect(activity.modifiedFiles).toEqual([
      { path: 'a.ts', kind: 'add' },
      { path: 'b.ts', kind: 'delete' },
    ])
  })

  it('joins the captures of one command across exec_command and write_stdin waits', () => {
    const activity = sessionActivity([
      ...tool('exec_command', {
        command: 'npm test',
        output: 'start\n',
        session_id: 'run-1',
        is_exited: false,
      }),
      ...tool('read_file', 'not an exec answer'),
      ...tool('write_stdin', {
        command: 'npm test',
        output: '3 passing\n',
        session_id: 'run-1',
        is_exited: true,
        exit_code: 0,
        spool_path: '.vtcode/context/tool_outputs/run-1.txt',
      }),
      ...tool('exec_command', {
        command: 'ls',
        output: 'x',
        session_id: 'run-2',
        is_exited: true,
        exit_code: 0,
      }),
    ])
    const run = lastTestRun(activity, { pattern: DEFAULT_TEST_COMMAND_PATTERN })
    expect(run).toMatchObject({ command: 'npm test', output: 'start\n3 passing\n', exitCode: 0 })
    expect(renderTestRun(run as NonNullable<typeof run>)).toBe(
      'Command: npm test\nExit code: 0\nOutput:\nstart\n3 passing\nFull output: .vtcode/context/tool_outputs/run-1.txt',
    )
    expect(
      lastTestRun(activity, { command: 'ls', pattern: DEFAULT_TEST_COMMAND_PATTERN })?.command,
    ).toBe('ls')
    expect(lastTestRun(activity, { command: 'make', pattern: '.*' })).toBeUndefined()
  })

  it('recognizes common test runners and nothing else by default', () => {
    // As lastTestRun matches it: on the linear-time engine.
    const re = linearRegex(DEFAULT_TEST_COMMAND_PATTERN)
    for (const yes of [
      'npm test',
      'cd app && npm run test',
      'npx vitest run',
      'pytest -q',
      'cargo test',
      'go test ./...',
      'make check',
    ]) {
      expect(re.exec(yes), yes).toBeDefined()
    }
    for (const no of ['npm install', 'echo test', 'cat latest.txt', 'git commit -m "go test"x']) {
      expect(re.exec(no), no).toBeUndefined()
    }
  })

  it("matches a session's own pattern in linear time, and refuses one that needs backtracking", () => {
    const command = `echo ${'a'.repeat(64)}`
    const activity = sessionActivity([
      ...tool('exec_command', { command, output: 'a', session_id: 'run-3', is_exited: true }),
    ])
    expect(lastTestRun(activity, { pattern: 'a{64}$' })?.command).toBe(command)
    // JavaScript's engine (and V8's own linear one, which takes no {0,100}) would try 2^64 ways;
    // the linear engine ~200 steps a character: more than its budget.
    expect(() => lastTestRun(activity, { pattern: '(?:a|a){0,100}b' })).toThrow(
      expect.objectContaining({
        code: 'invalid_input',
        message: expect.stringMatching(/^harness\.test_command_pattern: the pattern needs more/),
      }),
    )
    for (const pattern of ['(a|a)*\\1b', '(?!x)a']) {
      const refused = () => readSessionConfig({ harness: { test_command_pattern: pattern } })
      expect(refused, pattern).toThrow(/not a usable pattern: /)
      // Stored before new patterns had to suit the linear engine: the session still reads, and
      // looking for its test command is the same 400 as a pattern over its budget.
      expect(HarnessSchema.safeParse({ test_command_pattern: pattern }).success, pattern).toBe(true)
      expect(() => lastTestRun(activity, { pattern }), pattern).toThrow(
        expect.objectContaining({ code: 'invalid_input' }),
      )
    }
    expect(HarnessSchema.safeParse({ test_command_pattern: '(' }).success).toBe(false)
  })

  it('derives a handoff when nothing was given, and caller text replaces the derived one', () => {
    const base = {
      targetAgent: 'next',
      history: [{ role: 'user' as const, content: 'Do the thing.' }],
      activity: { modifiedFiles: [], commands: [] },
      turns: 1,
      modelRequests: 2,
      testPattern: DEFAULT_TEST_COMMAND_PATTERN,
    }
    const derived = buildHandoff(base)
    expect(derived).toMatchObject({
      state_summary: '1 turn, 2 model requests; 0 files modified.',
      task_context: 'Do the thing.',
      next_actions: ['Review the modified files and the boundary status, then continue the task.'],
    })
    expect(derived.test_results).toBeUndefined()
    const given = buildHandoff({
      ...base,
      plan: '1. step one\n2. step two',
      overrides: { state_summary: 'mine', open_decisions: ['which db?'] },
    })
    expect(given.state_summary).toBe('mine')
    expect(given.open_decisions).toEqual(['which db?'])
    expect(given.boundary_status).toEqual([
      { feature: 'step one', status: 'not_started' },
      { feature: 'step two', status: 'not_started' },
    ])
    expect(given.task_context).toBe('Do the thing.\n\nApproved plan:\n\n1. step one\n2. step two')
  })
})
