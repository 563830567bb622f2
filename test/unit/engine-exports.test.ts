import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import type { AtifTrajectory } from '../../src/core/exports/atif-trajectory.ts'
import { OutputArtifacts } from '../../src/store/output-artifacts.ts'
import { echoTool, TOOL_SECRET } from '../support/engine-deps.ts'
import { inProcessHookReceiver } from '../support/hook-receiver.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'
import { type ScriptedEngine, startScriptedEngine } from '../support/scripted-engine.ts'

/**
 * Compatibility exports (VT Code's event_log_path / exec --events, ATIF, Open Responses): written
 * beside the canonical store, each only when the session's harness asks for it.
 */
const KEY = 'exports-key-0123456789ab'
let engine: ScriptedEngine
let server: RunningServer

beforeAll(async () => {
  engine = startScriptedEngine()
  server = await serveApp(
    createApp({ api: engine.service, auth: { keys: [{ key: KEY, tenant: 'x1' }] }, log: () => {} }),
  )
})
afterAll(async () => {
  await server?.close()
  await engine?.close()
})
beforeEach(() => engine.model.reset())

const text = async (key: string) => {
  const object = await engine.store.get(key)
  return object ? new TextDecoder().decode(object.body) : undefined
}
const sessionRoot = (id: string) => `x1/default/.vtcode/sessions/${id}/`

async function bareEvents(sessionId: string) {
  const res = await fetch(`${server.url}/v1/sessions/${sessionId}/events`, {
    headers: { authorization: `Bearer ${KEY}` },
  })
  const lines = (await res.text()).split('\n').filter(Boolean)
  // The bare ThreadEvent of each NDJSON feed line, byte for byte.
  return lines.map((line) => `${line.slice(line.indexOf('"event":') + 8, -1)}\n`).join('')
}

describe('session exports', () => {
  it('event_log_path: the bare-event JSONL after every turn, the canonical store untouched', async () => {
    engine.model.enqueue(
      { toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"a"}' }] },
      { text: 'first' },
      { text: 'second' },
    )
    const { session_id } = await engine.service.createSession('x1', {
      tools: [echoTool(engine.receiver.url)],
      harness: { event_log_path: 'exports/run.jsonl' },
    })
    await engine.service.stepTurn('x1', session_id, { input: 'one' })
    const afterFirst = await text('x1/default/exports/run.jsonl')
    expect(afterFirst).toBe(await bareEvents(session_id))
    expect(afterFirst?.split('\n')[0]).toBe(`{"type":"thread.started","thread_id":"${session_id}"}`)

    await engine.service.stepTurn('x1', session_id, { input: 'two' })
    await engine.service.complete('x1', session_id)
    const final = await text('x1/default/exports/run.jsonl')
    expect(final).toBe(await bareEvents(session_id))
    expect(final?.trimEnd().split('\n').at(-1)).toContain('"type":"thread.completed"')
    // Defaults: the Open Responses view is written, the ATIF trajectory is not.
    expect(await text(`${sessionRoot(session_id)}derived/open-responses.jsonl`)).toContain('[DONE]')
    expect(await text(`${sessionRoot(session_id)}derived/atif-trajectory.json`)).toBeUndefined()
    expect(await text(`${sessionRoot(session_id)}events.jsonl`)).toContain('"schema_version"')
  })

  it('a folder path gets harness-<session>-<stamp>.jsonl, the same object every turn', async () => {
    engine.model.enqueue({ text: 'a' }, { text: 'b' })
    const { session_id } = await engine.service.createSession('x1', {
      harness: { event_log_path: '.vtcode/logs' },
    })
    await engine.service.stepTurn('x1', session_id, { input: 'one' })
    await engine.service.stepTurn('x1', session_id, { input: 'two' })
    const keys = (await engine.store.list('x1/default/.vtcode/logs/')).objects.map((o) => o.key)
    expect(keys).toHaveLength(1)
    expect(keys[0]).toMatch(
      new RegExp(`^x1/default/\\.vtcode/logs/harness-${session_id}-\\d{8}T\\d{6}Z\\.jsonl$`),
    )
    expect(await text(keys[0] as string)).toBe(await bareEvents(session_id))
  })

  it('atif_enabled writes derived/atif-trajectory.json; open_responses_enabled false skips the view', async () => {
    engine.model.enqueue(
      {
        reasoning: 'Check first.',
        toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"w"}' }],
        usage: { input_tokens: 40, output_tokens: 9 },
      },
      {
        text: 'It is sunny.',
        usage: { input_tokens: 60, cached_input_tokens: 32, output_tokens: 5 },
      },
    )
    const { session_id } = await engine.service.createSession('x1', {
      model: 'gpt-4o-mini',
      tools: [echoTool(engine.receiver.url)],
      harness: { atif_enabled: true, open_responses_enabled: false },
    })
    await engine.service.stepTurn('x1', session_id, { input: 'Weather?' })
    expect(await text(`${sessionRoot(session_id)}derived/atif-trajectory.json`)).toBeUndefined()
    await engine.service.complete('x1', session_id)
    const raw = await text(`${sessionRoot(session_id)}derived/atif-trajectory.json`)
    const atif = JSON.parse(raw ?? '{}') as AtifTrajectory
    expect(atif).toMatchObject({
      schema_version: 'ATIF-v1.4',
      session_id,
      agent: { name: 'turnline', version: '0.1.0', model_name: 'gpt-4o-mini' },
      final_metrics: {
        total_prompt_tokens: 100,
        total_completion_tokens: 14,
        total_cached_tokens: 32,
      },
    })
    expect(atif.steps.map((s) => s.source)).toEqual(['agent', 'agent', 'agent', 'system'])
    expect(atif.steps[0]).toEqual({
      step_id: 1,
      source: 'agent',
      reasoning_content: 'Check first.',
    })
    expect(atif.steps[1]?.tool_calls).toEqual([
      { tool_call_id: 'c1', function_name: 'lookup', arguments: { q: 'w' } },
    ])
    expect(await text(`${sessionRoot(session_id)}derived/open-responses.jsonl`)).toBeUndefined()
  })

  it('a tool answer kept as an output artifact is referenced by every export, never inlined', async () => {
    // 3 MB with a marker in its middle: only the artifact holds the middle
    const half = 'x'.repeat(1_500_000)
    engine.receiver.setReply(() => ({ body: `${half}MIDDLE-MARKER-31${half}` }))
    engine.model.enqueue(
      { toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"everything"}' }] },
      { text: 'read it' },
    )
    const { session_id } = await engine.service.createSession('x1', {
      tools: [echoTool(engine.receiver.url)],
      harness: { event_log_path: 'exports/big.jsonl', atif_enabled: true },
    })
    await engine.service.stepTurn('x1', session_id, { input: 'look it all up' })
    await engine.service.complete('x1', session_id)
    const root = sessionRoot(session_id)
    const exports = {
      'event log': await text('x1/default/exports/big.jsonl'),
      'ATIF trajectory': await text(`${root}derived/atif-trajectory.json`),
      'Open Responses view': await text(`${root}derived/open-responses.jsonl`),
      'events.jsonl': await text(`${root}events.jsonl`),
    }
    const id = /kept whole as artifact (out_[0-9a-f]{32})/.exec(exports['event log'] ?? '')?.[1]
    expect(id).toBeDefined()
    for (const [name, exported] of Object.entries(exports)) {
      expect(exported, name).toContain(`${id}`)
      expect(exported, name).not.toContain('MIDDLE-MARKER-31')
      expect(exported?.length, name).toBeLessThan(100_000)
    }
    // and the artifact itself holds the whole answer
    const outputs = new OutputArtifacts(engine.store, root)
    const parts: string[] = []
    for await (const part of (await outputs.open(id ?? '')).read(0, Number.MAX_SAFE_INTEGER)) {
      parts.push(new TextDecoder().decode(part))
    }
    expect(parts.join('')).toContain(`${half}MIDDLE-MARKER-31${half}`)
  })

  it('hook answers kept whole are named by the ATIF trajectory where they were kept, never inlined', async () => {
    const hooks = inProcessHookReceiver(TOOL_SECRET)
    const hooked = startScriptedEngine({ hooks })
    // 80 KB each (over the 64 KiB inline limit), a marker in the middle only the artifact holds.
    const pad = 'h'.repeat(40_000)
    hooks.setReply((hook) => ({ body: `${pad}${hook.path.slice(1)}-HOOK-MIDDLE${pad}` }))
    hooked.model.enqueue(
      { toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{"q":"w"}' }] },
      { text: 'done' },
    )
    const { session_id } = await hooked.service.createSession('x1', {
      tools: [echoTool(hooked.receiver.url)],
      hooks: [
        { event: 'session_start', type: 'http', name: 'boot', url: hooks.url('/start') },
        { event: 'post_tool_use', type: 'http', name: 'audit', url: hooks.url('/post') },
        { event: 'stop', type: 'http', name: 'review', url: hooks.url('/stop') },
      ],
      harness: { atif_enabled: true },
    })
    await hooked.service.stepTurn('x1', session_id, { input: 'look it up' })
    await hooked.service.complete('x1', session_id)
    const raw = hooked.store.get(`${sessionRoot(session_id)}derived/atif-trajectory.json`)
    const atif = JSON.parse(new TextDecoder().decode((await raw)?.body)) as AtifTrajectory
    expect(JSON.stringify(atif)).not.toContain('-HOOK-MIDDLE')
    const listed = await hooked.service.listKeptOutputs('x1', session_id, { limit: 50 })
    const kept = listed.outputs.flatMap((o) => (o.kind === 'hook_answer' ? [o] : []))
    expect(kept.map((o) => o.event)).toEqual(['session_start', 'post_tool_use', 'stop'])
    const steps = atif.steps.filter((step) => step.message?.startsWith('hook_answer: '))
    expect(steps.map((step) => step.extra?.artifact_id)).toEqual(kept.map((o) => o.artifact_id))
    // The session_start hook's first (kept as the session was created), each after its batch.
    expect(atif.steps[0]).toEqual({
      step_id: 1,
      source: 'system',
      message: `hook_answer: session_start hook boot: answer of ${kept[0]?.size} bytes (1 lines) kept whole as artifact ${kept[0]?.artifact_id}`,
      extra: {
        hook_event: 'session_start',
        hook: 'boot',
        hook_index: 0,
        hook_type: 'http',
        artifact_id: kept[0]?.artifact_id,
        size: 80_017,
        lines: 1,
      },
    })
    // The others after the last event of the batch that recorded each.
    const order = atif.steps.map((step) =>
      step.tool_calls ? 'call' : (step.extra?.hook_event ?? step.message),
    )
    expect(order).toEqual([
      'session_start',
      'call',
      'done',
      'turn_completed',
      'post_tool_use',
      'stop',
    ])
    expect(steps[1]?.extra?.tool_call_id).toBe('c1')
    expect(atif.final_metrics.total_steps).toBe(atif.steps.length)
    hooked.model.assertDone()
  })

  it('refuses event log paths outside the workspace or into the session store (400)', async () => {
    for (const path of [
      '../x.jsonl',
      '/abs.jsonl',
      'a//b',
      '.vtcode/sessions/x.jsonl',
      'a/../b',
      '.',
    ]) {
      const res = await fetch(`${server.url}/v1/sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ harness: { event_log_path: path } }),
      })
      expect(res.status, path).toBe(400)
    }
  })
})
