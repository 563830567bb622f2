/**
 * The baseline of bench/turn-cost.ts: the same turns written as a bare loop, with nothing but
 * `fetch` and a JSON-lines file. Each turn streams a Chat Completions request, appends the step
 * to the session's file and fsyncs it (so the tool call is durable before the tool runs), POSTs
 * the signed tool call, streams the second request with the tool result, and appends and fsyncs
 * again: state durable after every step, as in the engine.
 */
import { createHmac } from 'node:crypto'
import { open, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { lookupFunction, MODEL } from './scenario-tool.ts'
import type { Endpoints } from './turn-cost-scenario.ts'
import type { Variant } from './turnline-variants.ts'

interface ToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

type Message =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string }

interface Completion {
  text: string
  toolCalls: ToolCall[]
  usage: unknown
}

/** One streamed Chat Completions request, its SSE frames folded into text and tool calls. */
async function complete(baseURL: string, messages: Message[]): Promise<Completion> {
  const response = await fetch(`${baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
    body: JSON.stringify({
      model: MODEL,
      messages,
      tools: [lookupFunction],
      stream: true,
      stream_options: { include_usage: true },
    }),
  })
  if (!response.ok || !response.body) throw new Error(`model answered ${response.status}`)
  const decoder = new TextDecoder()
  let pending = ''
  let text = ''
  let usage: unknown
  const calls: ToolCall[] = []
  const frame = (raw: string) => {
    const data = raw.startsWith('data: ') ? raw.slice(6) : ''
    if (data === '' || data === '[DONE]') return
    const chunk = JSON.parse(data) as {
      usage?: unknown
      choices?: {
        delta?: {
          content?: string | null
          tool_calls?: {
            index: number
            id?: string
            function?: { name?: string; arguments?: string }
          }[]
        }
      }[]
    }
    if (chunk.usage) usage = chunk.usage
    const delta = chunk.choices?.[0]?.delta
    if (delta?.content) text += delta.content
    for (const part of delta?.tool_calls ?? []) {
      const call = calls[part.index] ?? {
        id: '',
        type: 'function',
        function: { name: '', arguments: '' },
      }
      calls[part.index] = call
      if (part.id) call.id = part.id
      if (part.function?.name) call.function.name += part.function.name
      if (part.function?.arguments) call.function.arguments += part.function.arguments
    }
  }
  const reader = response.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    pending += decoder.decode(value, { stream: true })
    let end = pending.indexOf('\n\n')
    while (end >= 0) {
      frame(pending.slice(0, end))
      pending = pending.slice(end + 2)
      end = pending.indexOf('\n\n')
    }
  }
  return { text, toolCalls: calls, usage }
}

/** Appends one JSON line and fsyncs the file before returning. */
async function appendDurable(path: string, record: unknown): Promise<void> {
  const handle = await open(path, 'a')
  try {
    await handle.appendFile(`${JSON.stringify(record)}\n`)
    await handle.sync()
  } finally {
    await handle.close()
  }
}

async function callTool(
  tool: { url: string; secret: string },
  sessionId: string,
  call: ToolCall,
): Promise<string> {
  const body = JSON.stringify({
    tool: call.function.name,
    arguments: JSON.parse(call.function.arguments) as unknown,
    session_id: sessionId,
    tool_call_id: call.id,
  })
  // Signed as Turnline signs its HTTP tool calls (Standard Webhooks), so the receiver is the same.
  const id = `${sessionId}:${call.id}`
  const timestamp = String(Math.floor(Date.now() / 1000))
  const mac = createHmac('sha256', tool.secret).update(`${id}.${timestamp}.${body}`)
  const response = await fetch(tool.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': `v1,${mac.digest('base64')}`,
    },
    body,
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`tool answered ${response.status}: ${text}`)
  return text
}

/** One raw-loop session: its transcript in memory, its steps in `<dir>/<id>.jsonl`. */
export async function rawSession(options: {
  dir: string
  id: string
  baseURL: string
  toolUrl: string
  toolSecret: string
}) {
  const path = join(options.dir, `${options.id}.jsonl`)
  await appendDurable(path, { session: options.id, created_at: new Date().toISOString() })
  const messages: Message[] = []
  let persisted = 0
  /** The messages since the last append, with the model's usage: one durable line per step. */
  const persist = async (usage: unknown) => {
    await appendDurable(path, { messages: messages.slice(persisted), usage })
    persisted = messages.length
  }
  return {
    /** One turn: the model, the tool, the model again; the answer's text once it is durable. */
    async turn(input: string): Promise<string> {
      messages.push({ role: 'user', content: input })
      for (let step = 0; ; step++) {
        const reply = await complete(options.baseURL, messages)
        const assistant: Message = {
          role: 'assistant',
          content: reply.text === '' ? null : reply.text,
          ...(reply.toolCalls.length ? { tool_calls: reply.toolCalls } : {}),
        }
        messages.push(assistant)
        await persist(reply.usage)
        if (reply.toolCalls.length === 0) return reply.text
        if (step > 0) throw new Error('the raw loop expected an answer after the tool result')
        for (const call of reply.toolCalls) {
          const output = await callTool(
            { url: options.toolUrl, secret: options.toolSecret },
            options.id,
            call,
          )
          messages.push({ role: 'tool', tool_call_id: call.id, content: output })
        }
      }
    },
    async bytes(): Promise<number> {
      return (await stat(path)).size
    },
  }
}

/** The raw loop as a variant of the turn-cost benches, one JSON-lines file per session. */
export function rawVariant(scenario: Endpoints, dir: string): Variant {
  let n = 0
  return {
    name: 'raw loop (baseline)',
    async newSession() {
      const session = await rawSession({
        dir,
        id: `raw-${n++}`,
        baseURL: scenario.mock.baseURL,
        toolUrl: scenario.toolUrl,
        toolSecret: scenario.toolSecret,
      })
      return {
        turn: async (input) => {
          await session.turn(input)
        },
        bytes: () => session.bytes(),
      }
    },
    objectRequests: () => undefined,
    coordinatorTrips: () => undefined,
    close: async () => {},
  }
}
