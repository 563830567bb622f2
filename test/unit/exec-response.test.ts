import { describe, expect, it } from 'vitest'
import { outputPreview, plainText } from '../../src/core/sandbox/exec-output-preview.ts'
import { execResponse } from '../../src/core/sandbox/exec-response.ts'
import type { ExecSnapshot, OutputCapture } from '../../src/ports/sandbox-runner.ts'

const bytes = (text: string) => new TextEncoder().encode(text).byteLength

function capture(head: string, tail = '', omittedBytes = 0): OutputCapture {
  return { from: 0, to: bytes(head) + bytes(tail) + omittedBytes, head, tail, omittedBytes }
}

function snap(overrides: Partial<ExecSnapshot>): ExecSnapshot {
  return {
    execSessionId: 'run-0123456789ab',
    requestId: 'req_x',
    toolCallId: 'call_0',
    command: 'make',
    workdir: '.',
    backend: 'pipe',
    state: { status: 'running', pid: 42 },
    attached: false,
    output: capture('ok\n'),
    totalOutputBytes: 3,
    spool: {
      path: '.vtcode/context/tool_outputs/write_stdin_run-0123456789ab.txt',
      complete: false,
    },
    wallTimeMs: 1234,
    ...overrides,
  }
}

describe('plainText', () => {
  it('drops escapes and controls, folds CRLF and carriage-return redraws', () => {
    const raw =
      '\u001b[1;31merror\u001b[0m: x\r\n10%\r50%\r100%\n\u001b]0;title\u0007done\u0000\u001b(B'
    expect(plainText(raw)).toBe('error: x\n100%\ndone')
  })
})

describe('outputPreview', () => {
  it('keeps short output whole', () => {
    expect(outputPreview(capture('a\nb\n'))).toEqual({ text: 'a\nb\n', truncated: false })
  })

  it('cuts long output to ≤ 6 KiB and ≤ 80 lines, keeping the start and (mostly) the end', () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `line ${i} ${'é'.repeat(20)}`)
    const whole = `${lines.join('\n')}\n`
    const preview = outputPreview(capture(whole))
    expect(preview.truncated).toBe(true)
    expect(bytes(preview.text)).toBeLessThanOrEqual(6 * 1024)
    expect(preview.text.replace(/\n$/, '').split('\n').length).toBeLessThanOrEqual(80)
    expect(preview.text.startsWith('line 0 ')).toBe(true)
    expect(preview.text).toContain('line 4999 ')
    expect(preview.text).toContain(`output truncated: ${bytes(whole)} bytes`)
    expect(preview.text).not.toContain('\uFFFD')
  })

  it('uses head and tail when the runner omitted the middle', () => {
    const preview = outputPreview(capture('first\n', 'last\n', 10_000_000), 1024)
    expect(preview.truncated).toBe(true)
    expect(preview.text).toMatch(/^first\n\[… output truncated: 10000011 bytes.*\]\nlast\n$/)
  })

  it('honours a tiny budget', () => {
    const preview = outputPreview(capture('x'.repeat(1000)), 40)
    expect(bytes(preview.text)).toBeLessThanOrEqual(40)
    expect(preview.truncated).toBe(true)
  })
})

describe('execResponse', () => {
  it('steers a running command toward a wait', () => {
    const response = execResponse(snap({}), { maxOutputTokens: 10_000 })
    expect(response).toEqual({
      success: true,
      output: 'ok\n',
      wall_time: 1.234,
      session_id: 'run-0123456789ab',
      command: 'make',
      working_directory: '.',
      backend: 'pipe',
      is_exited: false,
      process_id: 42,
      next_continue_args: { session_id: 'run-0123456789ab' },
      next_wait_args: { session_id: 'run-0123456789ab', action: 'wait', wait_timeout_seconds: 600 },
      next_action_hint: expect.stringContaining('write_stdin'),
      total_output_bytes: 3,
      output_truncated: false,
    })
  })

  it('reports an exit with wait fields and no steering', () => {
    const response = execResponse(snap({ state: { status: 'exited', exitCode: 2 } }), {
      maxOutputTokens: 100,
      wait: { waitedMs: 61_500, deadlineSeconds: 600 },
    })
    expect(response).toMatchObject({ is_exited: true, exit_code: 2, waited_seconds: 61.5 })
    expect(response.wait_deadline_seconds).toBe(600)
    expect(response).not.toHaveProperty('process_id')
    expect(response).not.toHaveProperty('next_wait_args')
  })

  it('exposes the spool of large output: partial while running, withheld while an exit drains', () => {
    const big = { output: capture('x'.repeat(9000)), totalOutputBytes: 9000 }
    const running = execResponse(snap(big), { maxOutputTokens: 10_000 })
    expect(running).toMatchObject({
      truncated: true,
      output_truncated: true,
      spool_path: '.vtcode/context/tool_outputs/write_stdin_run-0123456789ab.txt',
      output_spooled: true,
      spool_complete: false,
    })
    const draining = execResponse(snap({ ...big, state: { status: 'exited', exitCode: 0 } }), {
      maxOutputTokens: 10_000,
    })
    expect(draining).toMatchObject({ spool_complete: false, spool_pending: true })
    expect(draining).not.toHaveProperty('spool_path')
    const done = execResponse(
      snap({
        ...big,
        state: { status: 'exited', exitCode: 0 },
        spool: { path: 'p.txt', complete: true },
      }),
      { maxOutputTokens: 10_000 },
    )
    expect(done).toMatchObject({ spool_path: 'p.txt', output_spooled: true, spool_complete: true })
    expect(done).not.toHaveProperty('spool_pending')
  })

  it('bounds the preview by the token budget', () => {
    const response = execResponse(
      snap({ output: capture('y'.repeat(5000)), totalOutputBytes: 5000 }),
      {
        maxOutputTokens: 100,
      },
    )
    expect(bytes(response.output)).toBeLessThanOrEqual(400)
    expect(response.truncated).toBe(true)
  })
})
