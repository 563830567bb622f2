import { spawn } from 'node:child_process'
import { createHash, createHmac, randomBytes } from 'node:crypto'
import { chmod, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TurnlineClient } from '../../client/index.ts'
import { collect, repoRoot, runCli } from '../support/cli-process.ts'
import { echoTool } from '../support/engine-harness.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { startToolReceiver } from '../support/tool-receiver.ts'

/**
 * An HTTP tool answering several MB through `npm start`'s real entry: the answer is kept whole
 * as an output artifact (read back byte for byte, and by range, through the API), the model and
 * the stored log get a bounded preview naming it, and the model pages through it with
 * `read_tool_output`.
 */
const KEY = 'acme-output-artifacts-key-0123456789'
const OTHER_KEY = 'beta-output-artifacts-key-0123456789'
const TOOL_SECRET = 'output-artifacts-tool-secret-0123456789'

let dir: string
let mock: MockOpenAI
let receiver: Awaited<ReturnType<typeof startToolReceiver>>
let server: NodeEntry
let url: string

/** ~6 MB of numbered lines of random hex; line 70,000 holds a marker found nowhere else. */
function bigAnswer(): string {
  const lines: string[] = []
  for (let n = 1; n <= 90_000; n++) {
    const marker = n === 70_000 ? ' NEEDLE-7f3a' : ''
    lines.push(`line ${String(n).padStart(6, '0')} ${randomBytes(24).toString('hex')}${marker}`)
  }
  return `${lines.join('\n')}\n`
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-output-artifacts-'))
  await chmod(dir, 0o711)
  mock = await startMockOpenAI()
  receiver = await startToolReceiver(createHmac('sha256', TOOL_SECRET).update('acme').digest('hex'))
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dir, 'data'),
    TURNLINE_API_KEYS: `${KEY}=acme,${OTHER_KEY}=beta`,
    OPENAI_API_KEY: 'sk-output-artifacts',
    OPENAI_BASE_URL: mock.baseURL,
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_TOOL_SECRET: TOOL_SECRET,
    TURNLINE_TOOL_ALLOWED_HOSTS: receiver.host,
    TURNLINE_LOG: 'off',
  })
  url = await server.listening()
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await receiver?.close()
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

interface Answer {
  status?: string
  session_id?: string
}

async function post(path: string, body: unknown): Promise<{ status: number; json: Answer }> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: response.status, json: (await response.json()) as Answer }
}

const get = (path: string, headers: Record<string, string> = {}, key = KEY) =>
  fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}`, ...headers } })

function toolMessages(index: number): string[] {
  const messages = (mock.requests[index]?.body.messages ?? []) as {
    role: string
    content: string
  }[]
  return messages.filter((m) => m.role === 'tool').map((m) => m.content)
}

/** Bytes of every file below `folder`. */
async function bytesBelow(folder: string): Promise<number> {
  let total = 0
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size
  }
  return total
}

describe('an HTTP tool answer of several MB', () => {
  const answer = bigAnswer()
  let session: string
  let artifactId: string

  it('is kept whole as an artifact; the model and the log get a bounded preview', async () => {
    expect(answer.length).toBeGreaterThan(5_000_000)
    receiver.setReply(() => ({ body: answer }))
    session =
      (await post('/v1/sessions', { tools: [echoTool(receiver.url)] })).json.session_id ?? ''
    mock.enqueue(
      { toolCalls: [{ id: 'call_big', name: 'lookup', arguments: '{"q":"everything"}' }] },
      { text: 'looked' },
    )
    const turn = await post(`/v1/sessions/${session}/turns`, { input: 'look it all up' })
    expect(turn.json.status, JSON.stringify(turn.json).slice(0, 400)).toBe('completed')

    const sent = mock.requests.at(-1)?.body ?? {}
    expect(JSON.stringify(sent).length).toBeLessThan(100_000)
    const preview = toolMessages(mock.requests.length - 1)[0] ?? ''
    const named = /kept whole as artifact (out_[0-9a-f]{32})/.exec(preview)
    expect(named, preview.slice(0, 300)).not.toBeNull()
    artifactId = named?.[1] ?? ''
    expect(preview).toContain(`${answer.length.toLocaleString('en-US')} bytes`)
    expect(preview.startsWith(answer.slice(0, 1000))).toBe(true)
    expect(preview.endsWith(answer.slice(-1000))).toBe(true)
    expect(
      ((mock.requests.at(-1)?.body.tools ?? []) as { function: { name: string } }[]).map(
        (t) => t.function.name,
      ),
    ).toContain('read_tool_output')

    // The session's log and state hold the preview, not the answer.
    const sessionFolder = join(dir, 'data', 'acme', 'default', '.vtcode', 'sessions', session)
    const outputs = await bytesBelow(join(sessionFolder, 'outputs'))
    expect(outputs).toBeGreaterThanOrEqual(answer.length)
    expect((await bytesBelow(sessionFolder)) - outputs).toBeLessThan(500_000)
  })

  it('reads back byte-identical through the API, whole and by range', async () => {
    const whole = await get(`/v1/sessions/${session}/artifacts/${artifactId}`)
    expect(whole.status).toBe(200)
    expect(whole.headers.get('accept-ranges')).toBe('bytes')
    const bytes = Buffer.from(await whole.arrayBuffer())
    const digest = (data: Buffer | string) => createHash('sha256').update(data).digest('hex')
    expect(bytes.length).toBe(Buffer.byteLength(answer))
    expect(digest(bytes)).toBe(digest(answer))

    const part = await get(`/v1/sessions/${session}/artifacts/${artifactId}`, {
      range: 'bytes=1048000-1049999',
    })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe(`bytes 1048000-1049999/${answer.length}`)
    expect(await part.text()).toBe(answer.slice(1_048_000, 1_050_000))

    const tail = await get(`/v1/sessions/${session}/artifacts/${artifactId}`, {
      range: 'bytes=-10',
    })
    expect(await tail.text()).toBe(answer.slice(-10))

    const past = await get(`/v1/sessions/${session}/artifacts/${artifactId}`, {
      range: `bytes=${answer.length}-`,
    })
    expect(past.status).toBe(416)
    expect(past.headers.get('content-range')).toBe(`bytes */${answer.length}`)

    const unknown = await get(`/v1/sessions/${session}/artifacts/out_${'0'.repeat(32)}`)
    expect(unknown.status).toBe(404)
    const otherTenant = await get(`/v1/sessions/${session}/artifacts/${artifactId}`, {}, OTHER_KEY)
    expect(otherTenant.status).toBe(404)
    const malformed = await get(`/v1/sessions/${session}/artifacts/..%2Fmanifest.json`)
    expect(malformed.status).toBe(400)
  })

  it('is listed by the call that kept it', async () => {
    const listing = await get(`/v1/sessions/${session}/artifacts`)
    expect(listing.status).toBe(200)
    const body = (await listing.json()) as { outputs: Record<string, unknown>[]; resume?: string }
    expect(body).toEqual({
      resume: expect.stringMatching(/^[0-9]+$/),
      outputs: [
        {
          kind: 'tool_output',
          seq: expect.any(Number),
          item_id: expect.stringMatching(/:output$/),
          call_id: expect.any(String),
          tool_call_id: 'call_big',
          tool_name: 'lookup',
          turn_id: 'turn-1',
          artifact_id: artifactId,
          size: Buffer.byteLength(answer),
          lines: 90_000,
        },
      ],
    })
    expect(body.outputs[0]?.item_id).toBe(`${body.outputs[0]?.call_id}:output`)
    // Read again from where it stopped: only what was kept since (nothing).
    const since = await get(`/v1/sessions/${session}/artifacts?cursor=${body.resume}`)
    expect(await since.json()).toEqual({ outputs: [], resume: body.resume })
    expect((await get(`/v1/sessions/${session}/artifacts`, {}, OTHER_KEY)).status).toBe(404)
    expect((await get(`/v1/sessions/${session}/artifacts?limit=0`)).status).toBe(400)
  })

  it('the model pages through it with read_tool_output; the next request stays small', async () => {
    const read = (id: string, args: Record<string, unknown>) => ({
      id,
      name: 'read_tool_output',
      arguments: JSON.stringify({ artifact_id: artifactId, ...args }),
    })
    mock.enqueue(
      {
        toolCalls: [
          read('call_search', { search: 'needle-7F3A', ignore_case: true }),
          read('call_lines', { start_line: 89_999, line_count: 5 }),
          read('call_bytes', { offset: 3_000_000, length: 100 }),
        ],
      },
      { text: 'found it' },
    )
    const first = mock.requests.length
    const turn = await post(`/v1/sessions/${session}/turns`, { input: 'find the needle' })
    expect(turn.json.status, JSON.stringify(turn.json).slice(0, 400)).toBe('completed')
    expect(JSON.stringify(mock.requests[first]?.body).length).toBeLessThan(100_000)
    expect(JSON.stringify(mock.requests.at(-1)?.body).length).toBeLessThan(100_000)

    const [, search, lines, bytes] = toolMessages(mock.requests.length - 1)
    expect(search).toContain('1 matching line')
    expect(search).toContain('line 70000 (byte ')
    expect(search).toContain('NEEDLE-7f3a')
    const all = answer.split('\n')
    expect(lines).toContain(`lines 89999–90000 of 90000`)
    expect(lines).toContain(`${all[89_998]}\n${all[89_999]}`)
    expect(bytes).toContain(answer.slice(3_000_010, 3_000_090))
  })

  it('reads back through the typed client, the CLI and the Python client', async () => {
    const digest = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex')
    const client = new TurnlineClient({ baseUrl: url, apiKey: KEY })
    const opened = await client.outputs.open(session, artifactId)
    expect(opened.size).toBe(answer.length)
    expect(digest(new Uint8Array(await new Response(opened.body).arrayBuffer()))).toBe(
      digest(answer),
    )
    const range = { start: 2_000_000, end: 2_000_100 }
    const part = await client.outputs.bytes(session, artifactId, { range })
    expect(Buffer.from(part).toString()).toBe(answer.slice(2_000_000, 2_000_100))

    const file = join(dir, 'artifact.out')
    const cli = ['artifact', session, artifactId, '--url', url, '--api-key', KEY]
    const wrote = await runCli([...cli, '--output', file])
    expect(wrote.code, wrote.stderr).toBe(0)
    expect(digest(await readFile(file))).toBe(digest(answer))
    const printed = await runCli([...cli, '--range', '100-199'])
    expect(printed.stdout).toBe(answer.slice(100, 200))

    // The listing, from the client and the CLI; the CLI also finds an output by its call.
    const listed = await client.outputs.list(session)
    expect(listed.outputs.map((o) => [o.tool_call_id, o.artifact_id])).toEqual([
      ['call_big', artifactId],
    ])
    const connection = ['--url', url, '--api-key', KEY]
    const lines = await runCli(['artifact', session, ...connection])
    expect(lines.code, lines.stderr).toBe(0)
    expect(lines.stdout).toBe(
      `${artifactId}\t${answer.length} bytes\t90000 lines\tlookup\tcall_big ${(listed.outputs[0] as { item_id?: string } | undefined)?.item_id}\n`,
    )
    const byCall = await runCli(['artifact', session, 'call_big', '--range', '0-9', ...connection])
    expect(byCall.stdout).toBe(answer.slice(0, 10))
    const noCall = await runCli(['artifact', session, 'call_nothing', ...connection])
    expect(noCall.code).toBe(2)
    expect(noCall.stderr).toContain('no kept output of call call_nothing')

    const script = [
      'import asyncio, hashlib, sys',
      'from turnline import AsyncTurnlineClient, TurnlineClient',
      'url, key, session, artifact = sys.argv[1:]',
      'with TurnlineClient(url, api_key=key) as client:',
      '    whole = hashlib.sha256(b"".join(client.output_artifact(session, artifact))).hexdigest()',
      '    part = client.read_output_artifact(session, artifact, start=5, end=15).decode()',
      '    kept = [o["tool_call_id"] for o in client.kept_outputs(session)["outputs"]]',
      'async def main():',
      '    async with AsyncTurnlineClient(url, api_key=key) as client:',
      '        head = (await client.read_output_artifact(session, artifact, start=0, end=3)).decode()',
      '        listed = (await client.kept_outputs(session, limit=1))["outputs"][0]["artifact_id"]',
      '        return head + " " + str(listed == artifact)',
      'print(whole, part, ",".join(kept), asyncio.run(main()))',
    ].join('\n')
    const python = await collect(
      spawn('/usr/bin/python3', ['-c', script, url, KEY, session, artifactId], {
        cwd: join(repoRoot, 'clients/python'),
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    )
    expect(python.code, python.stderr).toBe(0)
    expect(python.stdout.trim()).toBe(
      `${digest(answer)} ${answer.slice(5, 15)} call_big ${answer.slice(0, 3)} True`,
    )
  })
})
