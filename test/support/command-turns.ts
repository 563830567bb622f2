import { expect } from 'vitest'
import type { MockOpenAI } from './mock-openai.ts'

/**
 * Turns whose model runs one command: the mock model asks for `exec_command` with the command,
 * then answers "done". For tests that attack the sandbox from where a tenant really stands.
 */
export function commandTurns(url: string, mock: MockOpenAI) {
  let calls = 0

  async function api(key: string, path: string, body: unknown): Promise<Record<string, unknown>> {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    const json = (await response.json()) as Record<string, unknown>
    if (response.status >= 300) {
      throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`)
    }
    return json
  }

  const createSession = async (key: string, config: Record<string, unknown> = {}) =>
    (await api(key, '/v1/sessions', config)).session_id as string

  /** One turn in which the model runs `cmd` with exec_command; the command's output. */
  async function runInTurn(key: string, sessionId: string, cmd: string): Promise<string> {
    calls += 1
    mock.enqueue(
      {
        toolCalls: [
          { id: `call_${calls}`, name: 'exec_command', arguments: JSON.stringify({ cmd }) },
        ],
      },
      { text: 'done' },
    )
    const turn = await api(key, `/v1/sessions/${sessionId}/turns`, { input: 'run it' })
    const events = turn.events as { type: string; item?: { type: string; output?: string } }[]
    const output = events.find((e) => e.type === 'item.completed' && e.item?.type === 'tool_output')
    expect(turn.status, JSON.stringify(turn)).toBe('completed')
    if (output === undefined) throw new Error(`no tool output in ${JSON.stringify(events)}`)
    // The tool_output item holds the extracted text; the model read the whole JSON answer.
    const messages = (mock.requests.at(-1)?.body.messages ?? []) as {
      role: string
      content: string
    }[]
    const answer = messages.findLast((m) => m.role === 'tool')?.content ?? '{}'
    return (JSON.parse(answer) as { output: string }).output
  }

  return { api, createSession, runInTurn }
}
