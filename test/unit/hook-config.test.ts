import { describe, expect, it } from 'vitest'
import { HookConfigSchema, HooksSchema } from '../../src/contract/hook-config.ts'
import { readSessionConfig } from '../../src/contract/session-config.ts'
import { hookEnvironment } from '../../src/core/hooks/command-hook.ts'
import { parseHookAnswer } from '../../src/core/hooks/hook-answer.ts'
import { hookMatches } from '../../src/core/hooks/hook-matcher.ts'
import {
  matcherSubject,
  postToolUsePayload,
  preCompactPayload,
  preToolUsePayload,
  sessionStartPayload,
  stopPayload,
} from '../../src/core/hooks/hook-payloads.ts'
import { assertHooksAllowed } from '../../src/core/hooks/http-hook.ts'

const ctx = {
  sessionId: 'sess-1',
  cwd: '/workspace/proj',
  transcriptPath: 'sessions/sess-1/events.jsonl',
}

describe('hook config', () => {
  it('fills the defaults: non-blocking, fail-open, 60 s', () => {
    expect(
      HookConfigSchema.parse({ event: 'stop', type: 'http', url: 'https://h.example/x' }),
    ).toEqual({
      event: 'stop',
      type: 'http',
      url: 'https://h.example/x',
      blocking: false,
      fail_closed: false,
      timeout_ms: 60_000,
    })
  })

  it('rejects what cannot work', () => {
    const bad = [
      { event: 'pre_tool_use', type: 'http', url: 'ftp://h.example/x' },
      { event: 'pre_tool_use', type: 'command' },
      { event: 'pre_tool_use', type: 'command', command: 'x', matcher: '(' },
      { event: 'stop', type: 'command', command: 'x', matcher: 'a' },
      { event: 'pre_tool_use', type: 'command', command: 'x', fail_closed: true },
      { event: 'session_end', type: 'command', command: 'x' },
      { event: 'pre_tool_use', type: 'command', command: 'x', timeout_ms: 0 },
      { event: 'pre_tool_use', type: 'command', command: 'x', extra: true },
    ]
    for (const hook of bad)
      expect(HookConfigSchema.safeParse(hook).success, JSON.stringify(hook)).toBe(false)
    expect(
      HooksSchema.safeParse(Array(65).fill({ event: 'stop', type: 'command', command: 'x' }))
        .success,
    ).toBe(false)
  })

  it('refuses HTTP hooks to hosts off the allow-list at creation', () => {
    const hooks = HooksSchema.parse([
      { event: 'stop', type: 'command', command: 'true' },
      { event: 'stop', type: 'http', url: 'http://127.0.0.1:9/x' },
    ])
    expect(() => assertHooksAllowed({ allowedHosts: ['127.0.0.1:9'] }, hooks)).not.toThrow()
    expect(() => assertHooksAllowed({ allowedHosts: ['example.com'] }, hooks)).toThrow(
      /hooks\[1\]: host 127.0.0.1:9 is not allowed/,
    )
  })
})

describe('hook payloads', () => {
  it('builds pre_compact exactly as VT Code, key order included', () => {
    const payload = preCompactPayload(ctx, {
      trigger: 'auto',
      mode: 'local',
      originalMessageCount: 42,
      compactedMessageCount: 9,
    })
    expect(JSON.stringify(payload)).toBe(
      '{"session_id":"sess-1","cwd":"/workspace/proj","hook_event_name":"PreCompact",' +
        '"transcript_path":"sessions/sess-1/events.jsonl","trigger":"auto","mode":"local",' +
        '"original_message_count":42,"compacted_message_count":9,"history_artifact_path":null}',
    )
  })

  it('builds the other events with the base fields first', () => {
    const noTranscript = { sessionId: 's', cwd: '/w' }
    expect(JSON.stringify(sessionStartPayload(noTranscript, 'fork'))).toBe(
      '{"session_id":"s","cwd":"/w","hook_event_name":"SessionStart","transcript_path":null,"source":"fork"}',
    )
    expect(
      preToolUsePayload(ctx, { toolName: 'send', toolInput: { a: 1 }, toolCallId: 'c1' }),
    ).toMatchObject({
      hook_event_name: 'PreToolUse',
      tool_name: 'send',
      tool_input: { a: 1 },
      tool_call_id: 'c1',
    })
    expect(
      Object.keys(postToolUsePayload(ctx, { toolName: 't', toolInput: null, toolResponse: 'ok' })),
    ).toEqual([
      'session_id',
      'cwd',
      'hook_event_name',
      'transcript_path',
      'tool_name',
      'tool_input',
      'tool_response',
      'tool_call_id',
    ])
    expect(stopPayload(ctx, { lastAssistantMessage: 'done' })).toMatchObject({
      hook_event_name: 'Stop',
      last_assistant_message: 'done',
      stop_hook_active: false,
    })
  })

  it('matches on tool name, trigger or source; stop matches always', () => {
    expect(matcherSubject(sessionStartPayload(ctx, 'resume'))).toBe('resume')
    expect(matcherSubject(stopPayload(ctx, { lastAssistantMessage: '' }))).toBeUndefined()
    expect(hookMatches(undefined, 'x')).toBe(true)
    expect(hookMatches('*', 'x')).toBe(true)
    expect(hookMatches('', 'x')).toBe(true)
    expect(hookMatches('send', 'send')).toBe(true)
    expect(hookMatches('send', 'send_email')).toBe(false)
    expect(hookMatches('Write|Edit', 'Edit')).toBe(true)
    expect(hookMatches('mcp__github__.*', 'mcp__github__create_issue')).toBe(true)
    expect(hookMatches('mcp__github__.*', 'mcp__gitlab__create_issue')).toBe(false)
    expect(hookMatches('auto', undefined)).toBe(true)
  })

  it('matches in time linear in the subject, and refuses what needs backtracking', () => {
    // On JavaScript's engine each would try 2^64 ways; V8's own linear engine takes neither.
    const name = 'a'.repeat(64)
    expect(hookMatches('(?:a|a){0,100}b', name)).toBe(false)
    expect(hookMatches('(?:a|a){0,100}', name)).toBe(true)
    expect(hookMatches('(?:a|a){0,100}', 'a'.repeat(101))).toBe(false)
    const hook = { event: 'pre_tool_use', type: 'http', url: 'https://hooks.example/h' }
    for (const [matcher, why] of [
      ['(a|a)*\\1b', 'back-references are not supported'],
      ['(?=a)a', 'lookarounds are not supported'],
      ['(?<!b)a', 'lookarounds are not supported'],
      ['(a', 'matcher is not a valid regular expression'],
    ]) {
      const refused = () => readSessionConfig({ hooks: [{ ...hook, matcher }] })
      expect(refused, matcher).toThrow(expect.objectContaining({ code: 'invalid_input' }))
      expect(refused, matcher).toThrow(why)
    }
    expect(readSessionConfig({ hooks: [{ ...hook, matcher: 'Write|Edit' }] }).hooks).toHaveLength(1)
  })

  it('reads a stored matcher the linear engine cannot run, and matches everything with it', () => {
    // Stored before new matchers had to suit the linear engine: the session still reads, and a
    // guard still runs (never on backtracking).
    const hook = { event: 'pre_tool_use', type: 'http', url: 'https://hooks.example/h' }
    for (const matcher of ['(?!Read).*', '(a|a)*\\1b']) {
      expect(HookConfigSchema.safeParse({ ...hook, matcher }).success, matcher).toBe(true)
      expect(hookMatches(matcher, 'Read'), matcher).toBe(true)
      expect(hookMatches(matcher, 'a'.repeat(64)), matcher).toBe(true)
    }
  })

  it('gives commands VT Code’s environment with the Claude aliases', () => {
    expect(hookEnvironment(preToolUsePayload(ctx, { toolName: 't', toolInput: {} }))).toEqual({
      VT_PROJECT_DIR: '/workspace/proj',
      CLAUDE_PROJECT_DIR: '/workspace/proj',
      VT_SESSION_ID: 'sess-1',
      CLAUDE_SESSION_ID: 'sess-1',
      VT_HOOK_EVENT: 'PreToolUse',
      VT_TRANSCRIPT_PATH: 'sessions/sess-1/events.jsonl',
      CLAUDE_TRANSCRIPT_PATH: 'sessions/sess-1/events.jsonl',
    })
    expect(
      hookEnvironment(stopPayload({ sessionId: 's', cwd: '/w' }, { lastAssistantMessage: '' })),
    ).not.toHaveProperty('VT_TRANSCRIPT_PATH')
  })

  it('reads deny answers in the documented shapes only', () => {
    expect(parseHookAnswer('{"decision":"deny","reason":"no"}')).toEqual({
      decision: 'deny',
      reason: 'no',
    })
    expect(parseHookAnswer('{"decision":"block"}')).toEqual({ decision: 'deny' })
    expect(
      parseHookAnswer(
        '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r"}}',
      ),
    ).toEqual({ decision: 'deny', reason: 'r' })
    expect(parseHookAnswer('{"decision":"allow"}')).toEqual({})
    expect(parseHookAnswer('deny')).toEqual({})
    expect(parseHookAnswer('{broken')).toEqual({})
    expect(parseHookAnswer('')).toEqual({})
  })
})
