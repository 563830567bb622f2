import { describe, expect, it } from 'vitest'
import type { HandoffResponse } from '../../src/contract/handoff-request.ts'
import { HANDOFF_DIRECTIVE } from '../../src/core/agent-layer/turn-start.ts'
import { useEngineWithRunner } from '../support/engine-with-runner.ts'
import { toolCall } from '../support/model-tool-call.ts'

/**
 * The handoff protocol on a real session with the reference runner: the modified files come
 * from its file_change items, the test results from the output of the command marked as the
 * test command; the next agent's session starts with the handoff in its orientation, in the
 * same sandbox workspace, and the source ends `handed_off`.
 */
const fixture = useEngineWithRunner('handoff')

const exec = (id: string, cmd: string) =>
  toolCall(id, 'exec_command', { cmd, yield_time_ms: 10_000 })
const GIT = 'git -c user.email=t@t -c user.name=t'

describe('handoff', () => {
  it("hands a real session's files and test output to the next agent's session", async () => {
    const { service, mock } = fixture.engine
    const { session_id: source } = await service.createSession('local', {
      workspace: 'handoff-ws',
      harness: { test_command: 'sh check.sh' },
    })
    mock.enqueue(
      {
        toolCalls: [
          toolCall('w1', 'write_file', { path: 'src/app.txt', content: 'login form\n' }),
          toolCall('w2', 'write_file', {
            path: 'check.sh',
            content: 'echo "2 passed"\necho "1 failed: test_signup"\nexit 1\n',
          }),
          exec('e1', `git init -q && ${GIT} add . && ${GIT} commit -qm "add login form"`),
          exec('e2', 'sh check.sh'),
          exec('e3', 'echo unrelated'),
        ],
      },
      { text: 'Login form done; signup test fails.' },
    )
    const turn = await service.stepTurn('local', source, { input: 'Build login and signup.' })
    expect(turn.status).toBe('completed')

    const res = await fixture.app.request(`/v1/sessions/${source}/handoff`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'h-1' },
      body: JSON.stringify({
        start: true,
        end_source: true,
        known_issues: ['signup has no validation'],
        boundary_status: [{ feature: 'signup', status: 'in_progress', notes: 'form only' }],
      }),
    })
    expect(res.status).toBe(201)
    const body = (await res.json()) as HandoffResponse
    const { handoff } = body
    expect(handoff.modified_files).toEqual(['src/app.txt (added)', 'check.sh (added)'])
    expect(handoff.test_results).toMatch(
      /^Command: sh check\.sh\nExit code: 1\nOutput:\n2 passed\n1 failed: test_signup$/,
    )
    expect(handoff.task_context).toBe('Build login and signup.')
    expect(handoff.known_issues).toEqual([
      'Tests fail: `sh check.sh` exited 1.',
      'signup has no validation',
    ])
    expect(handoff.next_actions[0]).toBe('Make the failing tests pass (`sh check.sh`).')
    expect(handoff.boundary_status).toEqual([
      { feature: 'signup', status: 'in_progress', notes: 'form only' },
    ])
    expect(handoff.state_summary).toContain('Login form done; signup test fails.')
    expect(body.prompt).toMatch(/^## HANDOFF FROM PREVIOUS AGENT\n\n/)
    expect(body.path).toBe('.vtcode/tasks/current_handoff.json')
    expect(body.source_completion?.events.at(-1)).toMatchObject({
      type: 'thread.completed',
      subtype: 'error_during_execution',
      outcome_code: 'handed_off',
      stop_reason: 'Task handed off to `next`',
    })
    const next = body.session?.session_id as string
    expect(body.session).toMatchObject({ handed_off_from: source, status: 'active' })

    // A retry with the same key finds the session the first call started.
    const again = await fixture.app.request(`/v1/sessions/${source}/handoff`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'h-1' },
      body: JSON.stringify({ start: true }),
    })
    expect(again.status).toBe(200)
    expect(((await again.json()) as HandoffResponse).session).toMatchObject({
      session_id: next,
      duplicate: true,
    })

    // The next agent starts without input, oriented from the handoff, in the same workspace.
    mock.enqueue(
      { toolCalls: [toolCall('r1', 'read_file', { path: 'src/app.txt' })] },
      { text: 'continuing' },
    )
    const first = await service.stepTurn('local', next, {})
    expect(first.status).toBe('completed')
    const request = mock.requests.at(-2)?.body.messages as { role: string; content: string }[]
    expect(request[0]?.role).toBe('system')
    const orientation = request[0]?.content ?? ''
    expect(orientation).toMatch(/### Recent Git Log\n[0-9a-f]{7,} add login form\n/)
    expect(orientation).toContain('## HANDOFF FROM PREVIOUS AGENT')
    expect(orientation).toContain('### Modified Files\nsrc/app.txt (added)\ncheck.sh (added)')
    expect(orientation).toContain('### Test Results\nCommand: sh check.sh\nExit code: 1')
    expect(orientation).toContain('- [IN PROGRESS] signup -- form only')
    expect(request[1]).toEqual({ role: 'user', content: HANDOFF_DIRECTIVE })
    const read = first.events.find(
      (e) => e.type === 'item.completed' && e.item.type === 'tool_output',
    )
    expect(read).toMatchObject({
      item: { status: 'completed', output: expect.stringContaining('login form') },
    })
    expect((await service.getOrientation('local', next)).orientation?.reason).toBe('handoff')
    mock.assertDone()
  })

  it('finds the test run by the configured pattern and keeps the source open by default', async () => {
    const { service, mock } = fixture.engine
    const { session_id } = await service.createSession('local', { workspace: 'handoff-ws2' })
    mock.enqueue(
      {
        toolCalls: [
          exec(
            'p1',
            'mkdir -p t && printf "ok 1\\nok 2\\n" > t/out && go test ./... 2>/dev/null || cat t/out',
          ),
        ],
      },
      { text: 'ran' },
    )
    await service.stepTurn('local', session_id, { input: 'run the tests' })
    const result = await service.handoff('local', session_id, {
      target_agent: 'reviewer',
      start: false,
      end_source: false,
    })
    expect(result.handoff.target_agent).toBe('reviewer')
    expect(result.handoff.test_results).toMatch(/^Command: mkdir -p t .*go test/)
    expect(result.handoff.test_results).toContain('ok 2')
    expect(result.session).toBeUndefined()
    expect((await service.getSession('local', session_id)).status).toBe('active')
    const stored = await service.getArtifact('local', 'handoff-ws2', 'handoff')
    expect(stored.value).toMatchObject({
      from_session: session_id,
      handoff: { target_agent: 'reviewer' },
    })
    mock.assertDone()
  })
})
