/**
 * Parser of the `apply_patch` document (the format VT Code and Codex give their models):
 *
 *   *** Begin Patch
 *   *** Add File: <path>          then "+" lines: the new file
 *   *** Delete File: <path>
 *   *** Update File: <path>       optionally "*** Move to: <path>", then hunks:
 *   @@ [context line]             " " context, "-" removed, "+" added, "*** End of File"
 *   *** End Patch
 *
 * Lenient where models are sloppy (CRLF, surrounding blank lines, a heredoc wrapper, a first hunk
 * without "@@", an empty line inside a hunk meaning an empty context line), strict about
 * everything else: any other line is an error naming its line number. Paths must be relative and
 * stay inside the workspace.
 *
 * Kept as our own code on purpose: the format is Codex's (its `apply-patch` crate), which no npm
 * library implements (unified-diff libraries such as `diff` parse `---`/`+++` hunks with line
 * numbers, not these context-anchored hunks). Its behaviour is checked against cases taken from
 * Codex's own tests (test/fixtures/apply-patch/).
 */

export interface PatchChunk {
  /** The `@@ <context>` line to find before the old lines, if any. */
  context?: string
  oldLines: string[]
  newLines: string[]
  /** The old lines end the file (`*** End of File`). */
  endOfFile: boolean
}

export type PatchOp =
  | { type: 'add'; path: string; contents: string }
  | { type: 'delete'; path: string }
  | { type: 'update'; path: string; moveTo?: string; chunks: PatchChunk[] }

export type PatchParse = { ok: true; ops: PatchOp[] } | { ok: false; message: string }

const BEGIN = '*** Begin Patch'
const END = '*** End Patch'
const ADD = '*** Add File: '
const DELETE = '*** Delete File: '
const UPDATE = '*** Update File: '
const MOVE = '*** Move to: '
const EOF_MARK = '*** End of File'

class PatchSyntaxError extends Error {}

export function parsePatch(text: string): PatchParse {
  try {
    return { ok: true, ops: parseOps(unwrap(text.replace(/\r\n?/g, '\n'))) }
  } catch (error) {
    if (error instanceof PatchSyntaxError) return { ok: false, message: error.message }
    throw error
  }
}

/** Lines with their 1-based numbers in the original text, without a heredoc wrapper. */
function unwrap(text: string): Array<[number, string]> {
  let lines = text.split('\n').map((line, i): [number, string] => [i + 1, line])
  // Blank lines around the patch are dropped with one slice (one at a time cost their square).
  let first = 0
  let end = lines.length
  while (first < end && lines[first]![1].trim() === '') first++
  while (end > first && lines[end - 1]![1].trim() === '') end--
  lines = lines.slice(first, end)
  const heredoc = /^(?:apply_patch\s+)?<<-?\s*(['"]?)(\w+)\1\s*$/.exec(lines[0]?.[1].trim() ?? '')
  if (heredoc?.[2] && lines.length >= 2 && lines.at(-1)![1].trim() === heredoc[2]) {
    lines = lines.slice(1, -1)
  }
  return lines
}

function parseOps(lines: Array<[number, string]>): PatchOp[] {
  const first = lines[0]
  if (!first || first[1].trim() !== BEGIN) {
    throw new PatchSyntaxError(`the first line of the patch must be '${BEGIN}'`)
  }
  const last = lines.at(-1)
  if (lines.length < 2 || !last || last[1].trim() !== END) {
    throw new PatchSyntaxError(`the last line of the patch must be '${END}'`)
  }
  const body = lines.slice(1, -1)
  const ops: PatchOp[] = []
  let at = 0
  while (at < body.length) {
    const [lineNo, raw] = body[at]!
    const line = raw.trim()
    if (line === '') {
      at++
      continue
    }
    if (line.startsWith(ADD)) {
      const path = checkPath(line.slice(ADD.length), lineNo)
      const content: string[] = []
      at++
      while (at < body.length && !isHeader(body[at]![1])) {
        const [n, text] = body[at]!
        if (!text.startsWith('+')) {
          throw new PatchSyntaxError(
            `line ${n}: every line of an added file starts with "+" (got ${JSON.stringify(text)})`,
          )
        }
        content.push(text.slice(1))
        at++
      }
      ops.push({ type: 'add', path, contents: content.length ? `${content.join('\n')}\n` : '' })
    } else if (line.startsWith(DELETE)) {
      ops.push({ type: 'delete', path: checkPath(line.slice(DELETE.length), lineNo) })
      at++
    } else if (line.startsWith(UPDATE)) {
      const path = checkPath(line.slice(UPDATE.length), lineNo)
      at++
      let moveTo: string | undefined
      if (at < body.length && body[at]![1].trim().startsWith(MOVE)) {
        const [n, text] = body[at]!
        moveTo = checkPath(text.trim().slice(MOVE.length), n)
        at++
      }
      const parsed = parseChunks(body, at, path)
      at = parsed.next
      if (parsed.chunks.length === 0 && moveTo === undefined) {
        throw new PatchSyntaxError(`line ${lineNo}: update of ${path} has no hunks`)
      }
      ops.push({ type: 'update', path, ...(moveTo ? { moveTo } : {}), chunks: parsed.chunks })
    } else {
      throw new PatchSyntaxError(
        `line ${lineNo}: expected '${ADD.trim()}', '${DELETE.trim()}' or '${UPDATE.trim()}', ` +
          `got ${JSON.stringify(raw)}`,
      )
    }
  }
  if (ops.length === 0) throw new PatchSyntaxError('the patch changes no file')
  return ops
}

function isHeader(raw: string): boolean {
  const line = raw.trim()
  return line.startsWith(ADD) || line.startsWith(DELETE) || line.startsWith(UPDATE)
}

function parseChunks(
  body: Array<[number, string]>,
  start: number,
  path: string,
): { chunks: PatchChunk[]; next: number } {
  const chunks: PatchChunk[] = []
  let at = start
  let current: (PatchChunk & { lineNo: number; lines: number }) | undefined
  const finish = () => {
    if (!current) return
    if (current.lines === 0) {
      throw new PatchSyntaxError(`line ${current.lineNo}: hunk in ${path} has no lines`)
    }
    const { lineNo: _n, lines: _l, ...chunk } = current
    chunks.push(chunk)
    current = undefined
  }
  while (at < body.length) {
    const [lineNo, raw] = body[at]!
    if (isHeader(raw)) break
    const trimmed = raw.trim()
    if (trimmed === '@@' || raw.startsWith('@@ ')) {
      finish()
      const context = trimmed === '@@' ? undefined : raw.slice(3)
      current = { oldLines: [], newLines: [], endOfFile: false, lineNo, lines: 0 }
      if (context !== undefined && context.trim() !== '') current.context = context
    } else if (trimmed === EOF_MARK) {
      if (!current || current.lines === 0) {
        throw new PatchSyntaxError(`line ${lineNo}: '${EOF_MARK}' must end a hunk`)
      }
      current.endOfFile = true
      finish()
    } else {
      const sign = raw[0]
      if (raw !== '' && sign !== ' ' && sign !== '-' && sign !== '+') {
        throw new PatchSyntaxError(
          `line ${lineNo}: a hunk line starts with " ", "-" or "+" (got ${JSON.stringify(raw)})`,
        )
      }
      if (!current) {
        if (chunks.length > 0) {
          throw new PatchSyntaxError(`line ${lineNo}: hunk lines after '${EOF_MARK}' need '@@'`)
        }
        current = { oldLines: [], newLines: [], endOfFile: false, lineNo, lines: 0 }
      }
      const text = raw.slice(1)
      if (raw === '' || sign === ' ') {
        current.oldLines.push(text)
        current.newLines.push(text)
      } else if (sign === '-') {
        current.oldLines.push(text)
      } else {
        current.newLines.push(text)
      }
      current.lines++
    }
    at++
  }
  finish()
  return { chunks, next: at }
}

/** A relative path that stays inside the workspace, with "./" and duplicate slashes removed. */
function checkPath(raw: string, lineNo: number): string {
  const path = raw.trim()
  if (path === '') throw new PatchSyntaxError(`line ${lineNo}: missing file path`)
  if (path.includes('\0')) throw new PatchSyntaxError(`line ${lineNo}: path contains NUL`)
  if (path.startsWith('/') || path.startsWith('\\') || /^[A-Za-z]:/.test(path)) {
    throw new PatchSyntaxError(
      `line ${lineNo}: path ${JSON.stringify(path)} must be relative to the workspace`,
    )
  }
  const segments = path.split(/[/\\]+/).filter((s) => s !== '' && s !== '.')
  if (segments.includes('..')) {
    throw new PatchSyntaxError(
      `line ${lineNo}: path ${JSON.stringify(path)} must not contain ".." (it would leave the workspace)`,
    )
  }
  if (segments.length === 0) throw new PatchSyntaxError(`line ${lineNo}: missing file path`)
  return segments.join('/')
}
