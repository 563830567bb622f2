import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { VerifyResponse } from '../../src/contract/verification.ts'
import { useEngineWithRunner } from '../support/engine-with-runner.ts'
import { toolCall } from '../support/model-tool-call.ts'

/**
 * Propose/verify separation with the reference runner: a verifier sub-agent with read-only
 * tools re-reads the proposer's files, cannot write them (its write attempt is refused), and its
 * rejection reaches the proposer — as a harness item in its stream and as what its next turn
 * starts with; `harness.verification: required` gates the next turn until the change is judged.
 */
const fixture = useEngineWithRunner('verify')

const items = (events: readonly ThreadEvent[], type: string) =>
  events.flatMap((e) => (e.type === 'item.completed' && e.item.type === type ? [e.item] : []))
const verify = async (sessionId: string, body: object) => {
  const res = await fixture.app.request(`/v1/sessions/${sessionId}/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  expect(res.status).toBe(200)
  return (await res.json()) as VerifyResponse
}
const toolNames = (n: number) =>
  ((fixture.engine.mock.requests[n]?.body.tools ?? []) as { function: { name: string } }[]).map(
    (t) => t.function.name,
  )

describe('verifier', () => {
  it('rejects through a read-only verifier that cannot write, and the proposer sees why', async () => {
    const { service, mock } = fixture.engine
    const { session_id: proposer } = await service.createSession('local', {
      workspace: 'verify-ws',
      harness: { verification: 'required' },
    })
    mock.enqueue(
      {
        toolCalls: [
          toolCall('w', 'write_file', {
            path: 'src/calc.js',
            content: 'export const add = (a, b) => a - b\n',
          }),
        ],
      },
      { text: 'Added add().' },
    )
    await service.stepTurn('local', proposer, { input: 'Write an add function in src/calc.js.' })
    // The change is not judged yet: the next turn and completion wait for it.
    await expect(service.stepTurn('local', proposer, { input: 'next' })).rejects.toMatchObject({
      code: 'conflict',
    })
    await expect(service.complete('local', proposer)).rejects.toMatchObject({ code: 'conflict' })

    const before = mock.requests.length
    mock.enqueue(
      { toolCalls: [toolCall('v1', 'write_file', { path: 'src/calc.js', content: 'hijacked\n' })] },
      { toolCalls: [toolCall('v2', 'read_file', { path: 'src/calc.js' })] },
      {
        text: '## Verification Result\n\n**Decision:** REJECT\n\n**Issues Found:**\n1. [critical] src/calc.js: add subtracts its arguments\n\n**Reasoning:** add returns a - b.',
      },
    )
    const answer = await verify(proposer, { description: 'An add function.' })
    expect(answer.verification).toMatchObject({
      verdict: 'rejected',
      issues: ['[critical] src/calc.js: add subtracts its arguments'],
      reasoning: 'add returns a - b.',
      paths: ['src/calc.js'],
      turn_id: 'turn-1',
    })
    // The verifier saw only read-only tools and none of the proposer's transcript.
    expect(toolNames(before)).toEqual(['read_file'])
    const verifierPrompt = JSON.stringify(mock.requests[before]?.body.messages)
    expect(verifierPrompt).toContain('## Affected Files\\n- src/calc.js')
    expect(verifierPrompt).not.toContain('Write an add function')
    // Its write attempt was refused and the file is as the proposer left it.
    const verifierId = answer.verification.verifier_session as string
    const verifierEvents = (await service.readEvents('local', verifierId, -1, 1000)).events.map(
      (e) => e.line.event,
    )
    const outputs = items(verifierEvents as ThreadEvent[], 'tool_output') as {
      status: string
      output: string
    }[]
    expect(outputs[0]).toMatchObject({
      status: 'failed',
      output: expect.stringContaining('unknown tool "write_file"'),
    })
    expect(outputs[1]).toMatchObject({
      status: 'completed',
      output: expect.stringContaining('a - b'),
    })
    const onDisk = await readFile(join(fixture.root, 'local', proposer, 'src', 'calc.js'), 'utf8')
    expect(onDisk).toBe('export const add = (a, b) => a - b\n')

    // The proposer's stream holds the outcome as harness items.
    const harness = items(answer.events, 'harness') as {
      event: string
      message: string
      path: string
    }[]
    expect(harness.map((h) => h.event)).toEqual(['verification_started', 'verification_failed'])
    expect(harness[1]).toMatchObject({
      path: 'src/calc.js',
      message: expect.stringContaining('add subtracts'),
    })
    const logged = (await service.readEvents('local', proposer, -1, 1000)).events.map(
      (e) => e.line.event,
    )
    expect(items(logged as ThreadEvent[], 'harness')).toHaveLength(2)

    // The rejection gates nothing further, and the next turn starts with its reasons.
    mock.enqueue(
      {
        toolCalls: [
          toolCall('f', 'write_file', {
            path: 'src/calc.js',
            content: 'export const add = (a, b) => a + b\n',
          }),
        ],
      },
      { text: 'Fixed.' },
    )
    await service.stepTurn('local', proposer, { input: 'Go on.' })
    const sent = mock.requests.at(-2)?.body.messages as { role: string; content: string }[]
    expect(sent.at(-2)?.content).toMatch(
      /^\[Verification\] An independent verifier REJECTED your change from turn-1 to src\/calc\.js\.\nIssues:\n- \[critical\] src\/calc\.js: add subtracts its arguments/,
    )
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'Go on.' })

    // The fix is approved; completing the session is allowed again.
    mock.enqueue(
      { toolCalls: [toolCall('r', 'read_file', { path: 'src/calc.js' })] },
      {
        text: '## Verification Result\n\n**Decision:** APPROVE\n\n**Issues Found:** None\n\n**Reasoning:** add adds.',
      },
    )
    const approved = await verify(proposer, {})
    expect(approved.verification).toMatchObject({
      verdict: 'approved',
      issues: [],
      turn_id: 'turn-2',
    })
    expect(items(approved.events, 'harness').map((h) => (h as { event: string }).event)).toEqual([
      'verification_started',
      'verification_passed',
    ])
    expect((await service.complete('local', proposer)).status).toBe('terminal')
    mock.assertDone()
  })

  it('rejects fail-closed when the verifier answers without an explicit decision', async () => {
    const { service, mock } = fixture.engine
    const { session_id } = await service.createSession('local', { workspace: 'verify-ws2' })
    mock.enqueue({ text: 'It looks fine I guess.' })
    const answer = await verify(session_id, { paths: ['README.md'] })
    expect(answer.verification).toMatchObject({
      verdict: 'rejected',
      issues: ['The verifier gave no explicit approval.'],
    })
    const nothing = await fixture.app.request(`/v1/sessions/${session_id}/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    expect(nothing.status).toBe(409)
    mock.assertDone()
  })
})
