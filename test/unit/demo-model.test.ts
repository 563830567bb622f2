import { describe, expect, it } from 'vitest'
import { createDemoModelClient, DEMO_LABEL } from '../../adapters/demo-model/demo-model-client.ts'
import { demoIntent } from '../../adapters/demo-model/demo-prompt-intent.ts'
import { DEMO_STRING, schemaSample } from '../../adapters/demo-model/schema-sample.ts'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import { EXEC_COMMAND_TOOL, WRITE_STDIN_TOOL } from '../../src/core/sandbox/exec-tool-schemas.ts'
import { READ_FILE_TOOL, WRITE_FILE_TOOL } from '../../src/core/sandbox/file-tools.ts'
import type { ModelRequest, ModelResponse, ModelStreamEvent } from '../../src/ports/model-client.ts'

const SANDBOX = [EXEC_COMMAND_TOOL, WRITE_STDIN_TOOL, READ_FILE_TOOL, WRITE_FILE_TOOL]

function request(messages: HistoryMessage[], extra: Partial<ModelRequest> = {}): ModelRequest {
  return { model: 'turnline-demo', api: 'chat', messages, tools: SANDBOX, ...extra }
}

async function run(
  req: ModelRequest,
): Promise<{ events: ModelStreamEvent[]; response: ModelResponse }> {
  const events: ModelStreamEvent[] = []
  for await (const event of createDemoModelClient().stream(req)) events.push(event)
  const last = events.at(-1)
  if (last?.type !== 'completed') throw new Error('no completed event')
  return { events, response: last.response }
}

describe('offline demo model', () => {
  it('answers a plain prompt, labelled, with what it can do', async () => {
    const { events, response } = await run(request([{ role: 'user', content: 'Hello there' }]))
    expect(response.toolCalls).toEqual([])
    expect(response.text.startsWith(`${DEMO_LABEL} `)).toBe(true)
    expect(response.text).toContain('You wrote: "Hello there"')
    expect(response.text).toMatch(/OPENAI_API_KEY/)
    // It streams: reasoning, then the text in several deltas that add up to the answer.
    const deltas = events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : []))
    expect(deltas.length).toBeGreaterThan(3)
    expect(deltas.join('')).toBe(response.text)
    expect(events[0]?.type).toBe('reasoning_delta')
    expect(response.stopReason).toBe('stop')
  })

  it('says when it stands in for another model', async () => {
    const { response } = await run(request([{ role: 'user', content: 'hi' }], { model: 'gpt-4o' }))
    expect(response.text).toContain('(answering for "gpt-4o": no model endpoint is set)')
  })

  it('is deterministic: the same request gives the same response', async () => {
    const req = request([{ role: 'user', content: 'run `ls -la`' }])
    expect((await run(req)).response).toEqual((await run(req)).response)
  })

  it('calls exec_command for a command, then reports its result', async () => {
    const prompt: HistoryMessage = { role: 'user', content: 'Please run `echo hi` for me' }
    const first = await run(request([prompt]))
    expect(first.response.text).toBe('')
    expect(first.response.toolCalls).toEqual([
      { id: 'call_demo_1', name: 'exec_command', arguments: '{"cmd":"echo hi"}' },
    ])
    expect(first.response.stopReason).toBe('tool_calls')
    const result = JSON.stringify({
      success: true,
      output: 'hi\n',
      session_id: 'run-1',
      command: 'echo hi',
      is_exited: true,
      exit_code: 0,
    })
    const second = await run(
      request([
        prompt,
        { role: 'assistant', content: '', tool_calls: first.response.toolCalls },
        { role: 'tool', tool_call_id: 'call_demo_1', content: result },
      ]),
    )
    expect(second.response.toolCalls).toEqual([])
    expect(second.response.text).toBe(
      `${DEMO_LABEL} Done. \`echo hi\` exited with code 0, output:\nhi\n`,
    )
  })

  it('waits on a command that is still running with write_stdin', async () => {
    const running = JSON.stringify({
      success: true,
      output: '',
      session_id: 'run-7',
      is_exited: false,
    })
    const { response } = await run(
      request([
        { role: 'user', content: 'run: sleep 30' },
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { id: 'call_demo_1', name: 'exec_command', arguments: '{"cmd":"sleep 30"}' },
          ],
        },
        { role: 'tool', tool_call_id: 'call_demo_1', content: running },
      ]),
    )
    expect(response.toolCalls).toEqual([
      {
        id: 'call_demo_2',
        name: 'write_stdin',
        arguments: '{"session_id":"run-7","action":"wait","wait_timeout_seconds":600}',
      },
    ])
  })

  it('says so when the tool a prompt asks for is not offered', async () => {
    const { response } = await run(request([{ role: 'user', content: 'run `ls`' }], { tools: [] }))
    expect(response.toolCalls).toEqual([])
    expect(response.text).toMatch(
      /^\[offline demo model\] You asked for exec_command, but this session has no such tool/,
    )
  })

  it('answers with a sample of the output schema', async () => {
    const outputSchema = {
      type: 'object',
      properties: {
        verdict: { type: 'string', enum: ['pass', 'fail'] },
        score: { type: 'integer', minimum: 3 },
        notes: { type: 'array', items: { type: 'string' } },
      },
      required: ['verdict', 'score', 'notes'],
      additionalProperties: false,
    }
    const { response } = await run(
      request([{ role: 'user', content: 'judge it' }], { outputSchema }),
    )
    expect(JSON.parse(response.text)).toEqual({ verdict: 'pass', score: 3, notes: [DEMO_STRING] })
  })

  it('summarizes a compaction request by listing the user turns', async () => {
    const { response } = await run(
      request(
        [
          { role: 'system', content: 'You are compacting…' },
          {
            role: 'user',
            content:
              'Summary requested at 2026-01-01T00:00:00Z. The transcript follows.\n\n[user]\nfix the bug\n\n[assistant]\nok',
          },
        ],
        { tools: [] },
      ),
    )
    expect(response.text).toContain('- fix the bug')
    expect(response.text.startsWith(DEMO_LABEL)).toBe(true)
  })

  it('estimates usage from lengths, four characters a token', async () => {
    const { response } = await run(request([{ role: 'user', content: 'x'.repeat(40) }]))
    expect(response.usage.input_tokens).toBe(10)
    expect(response.usage.output_tokens).toBeGreaterThan(10)
    expect(response.usage.cached_input_tokens).toBe(0)
  })

  it('stops at once when its request is aborted', async () => {
    const controller = new AbortController()
    controller.abort()
    await expect(
      run(request([{ role: 'user', content: 'hi' }], { signal: controller.signal })),
    ).rejects.toThrow()
  })
})

describe('demo prompt intents', () => {
  it.each([
    ['run `ls -la`', { tool: 'exec_command', args: { cmd: 'ls -la' } }],
    ['run: npm test', { tool: 'exec_command', args: { cmd: 'npm test' } }],
    ['$ uname -a', { tool: 'exec_command', args: { cmd: 'uname -a' } }],
    ['read README.md', { tool: 'read_file', args: { path: 'README.md' } }],
    ['show me the file src/app.ts please', { tool: 'read_file', args: { path: 'src/app.ts' } }],
    [
      'write notes.txt: hello world',
      { tool: 'write_file', args: { path: 'notes.txt', content: 'hello world' } },
    ],
    [
      'create a file out/a.json with "{}"',
      { tool: 'write_file', args: { path: 'out/a.json', content: '{}' } },
    ],
    [
      'apply this:\n*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\nthanks',
      {
        tool: 'apply_patch',
        args: { input: '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch' },
      },
    ],
  ])('%s', (prompt, intent) => {
    expect(demoIntent(prompt)).toEqual(intent)
  })

  it('finds nothing in ordinary prose', () => {
    expect(demoIntent('What is the capital of France?')).toBeUndefined()
    expect(demoIntent('I like to read books')).toBeUndefined()
  })
})

describe('schema samples', () => {
  it('follows refs, unions, formats and bounds', () => {
    const schema = {
      $defs: { when: { type: 'string', format: 'date-time' } },
      type: 'object',
      properties: {
        at: { $ref: '#/$defs/when' },
        either: { anyOf: [{ type: 'null' }, { type: 'number', minimum: 1.5 }] },
        fixed: { const: 'x' },
        flag: { type: 'boolean' },
        short: { type: 'string', maxLength: 4 },
        list: { type: 'array', minItems: 2, items: { type: 'integer' } },
      },
    }
    expect(schemaSample(schema)).toEqual({
      at: '2000-01-01T00:00:00Z',
      either: 1.5,
      fixed: 'x',
      flag: true,
      short: 'offl',
      list: [0, 0],
    })
  })
})
