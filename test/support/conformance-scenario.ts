import { randomUUID } from 'node:crypto'
import { echoTool } from './engine-deps.ts'
import { parseSse } from './sse-frames.ts'

/**
 * The scripted sessions of the cross-runtime conformance run (test/runtime/cross-runtime-
 * conformance.test.ts), over the HTTP API of one runtime or of several in turn: plain turns and
 * an idempotent replay, a streamed (SSE) turn calling a signed HTTP tool, tool calls with
 * malformed JSON, an unknown tool and arguments that break the tool's schema, a steering intent,
 * automatic compaction at a small context window, manual compaction, the canonical events, the
 * session, and `/v1/responses` streamed and not. The model is `conformanceAnswer`.
 */
export interface ConformanceRequest {
  method: string
  path: string
  body?: unknown
  headers?: Record<string, string>
}

export interface ConformanceAnswer {
  status: number
  contentType: string
  text: string
}

/** One runtime's HTTP API (over a socket, or a Lambda handler invoked in-process). */
export type ConformanceCall = (request: ConformanceRequest) => Promise<ConformanceAnswer>

/** What one step answered: status, content type, and the body as JSON, NDJSON lines or SSE frames. */
export interface ConformanceRecord {
  step: string
  status: number
  contentType: string
  body: unknown
}

/** Long enough that a few of them cross the automatic compaction threshold of the session. */
const PROSE =
  'The harbour pilots met at dawn to compare the tide tables with the soundings taken during ' +
  'the night, because the new channel markers had drifted after the storm and the ferries ' +
  'needed a safe lane before the morning crossings began. '

export async function runConformanceScenario(
  callAt: (step: number) => ConformanceCall,
  toolUrl: string,
): Promise<ConformanceRecord[]> {
  const records: ConformanceRecord[] = []
  let step = 0
  const send = async (label: string, request: ConformanceRequest) => {
    const answer = await callAt(step++)({
      ...request,
      headers: { 'content-type': 'application/json', ...request.headers },
    })
    const record = { step: label, status: answer.status, contentType: answer.contentType }
    records.push({ ...record, body: parseBody(answer) })
    return answer
  }
  const json = (answer: ConformanceAnswer) => JSON.parse(answer.text) as Record<string, unknown>

  const created = json(
    await send('create', {
      method: 'POST',
      path: '/v1/sessions',
      body: {
        instructions: 'Be brief.',
        tools: [echoTool(toolUrl)],
        harness: { max_context_tokens: 4000 },
      },
    }),
  )
  const turns = `/v1/sessions/${String(created.session_id)}/turns`
  const turn = (label: string, input: string, headers?: Record<string, string>) =>
    send(label, { method: 'POST', path: turns, body: { input }, ...(headers ? { headers } : {}) })

  const key = { 'idempotency-key': randomUUID() }
  await turn('plain turn', 'Hello there.', key)
  await turn('idempotent replay', 'Hello there.', key)
  await turn('SSE turn with a signed HTTP tool', 'Weather? [[tool lookup {"q":"weather"}]]', {
    accept: 'text/event-stream',
  })
  await turn(
    'malformed, unknown and schema-violating tool calls',
    'Try these: [[tool lookup {"q": "unterminated]] [[tool nosuch {}]] [[tool lookup {"q":5}]]',
  )
  await send('steering intent', {
    method: 'POST',
    path: `/v1/sessions/${String(created.session_id)}/intents`,
    body: { text: 'Also mention the tide.' },
  })
  await turn('turn applying the intent', 'Go on.')
  for (let i = 1; i <= 6; i++) await turn(`long turn ${i}`, `${i}. ${PROSE.repeat(4)}`)
  await send('manual compaction', {
    method: 'POST',
    path: `/v1/sessions/${String(created.session_id)}/compact`,
  })
  await turn('turn after compaction', 'Summarise where we are.')
  await send('canonical events', {
    method: 'GET',
    path: `/v1/sessions/${String(created.session_id)}/events`,
  })
  await send('session', { method: 'GET', path: `/v1/sessions/${String(created.session_id)}` })
  await send('responses, whole', {
    method: 'POST',
    path: '/v1/responses',
    body: { input: 'One answer, please.' },
  })
  await send('responses, streamed', {
    method: 'POST',
    path: '/v1/responses',
    body: { input: 'Stream it. [[tool lookup {"q":"tide"}]]', stream: true },
  })
  return records
}

function parseBody(answer: ConformanceAnswer): unknown {
  if (answer.contentType.startsWith('text/event-stream')) {
    return parseSse(answer.text).frames.map((frame) => ({
      ...frame,
      data: frame.data === '[DONE]' ? frame.data : JSON.parse(frame.data),
    }))
  }
  if (answer.contentType.startsWith('application/x-ndjson')) {
    return answer.text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line))
  }
  return answer.text === '' ? '' : JSON.parse(answer.text)
}
