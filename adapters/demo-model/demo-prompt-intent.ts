/**
 * What the offline demo model reads out of a user message: a request for one of the sandbox
 * tools, or nothing (then it just answers). Plain patterns, so the same prompt always gives the
 * same call; the model does not understand language.
 */
export type DemoIntent =
  | { tool: 'exec_command'; args: { cmd: string } }
  | { tool: 'read_file'; args: { path: string } }
  | { tool: 'write_file'; args: { path: string; content: string } }
  | { tool: 'apply_patch'; args: { input: string } }

const PATCH = /\*\*\* Begin Patch\n[\s\S]*?\n\*\*\* End Patch/
/** `write notes.txt: hello`, `write file notes.txt with hello`, `create notes.txt containing …`. */
const WRITE =
  /\b(?:write|create)\s+(?:(?:a|the)\s+)?(?:file\s+)?`?([\w./-]+\.[\w-]+|[\w./-]+\/[\w.-]+)`?\s*(?::|\bwith\b|\bcontaining\b)\s*([\s\S]+)$/i
/** `read README.md`, `read the file src/a.ts`, `show me package.json`, `cat notes.txt`. */
const READ =
  /\b(?:read|show(?:\s+me)?|open|cat)\s+(?:(?:the|a)\s+)?(?:file\s+)?`?([\w./-]+\.[\w-]+|[\w./-]+\/[\w.-]+)`?/i
/** `run \`ls -la\`` — a command in backticks after run / execute / exec. */
const RUN_QUOTED = /\b(?:run|execute|exec)\b[^`\n]*`([^`\n]+)`/i
/** `run: ls -la`, `$ ls -la`, `exec ls` — the rest of the line. */
const RUN_LINE = /(?:^|\n)\s*(?:(?:please\s+)?(?:run|execute|exec)\b\s*:?|\$)\s*([^\n]+)/i

/** The first tool request in the text: a patch, then a write, a read, a command. */
export function demoIntent(text: string): DemoIntent | undefined {
  const patch = PATCH.exec(text)
  if (patch) return { tool: 'apply_patch', args: { input: patch[0] } }
  const write = WRITE.exec(text)
  if (write?.[1] && write[2] !== undefined) {
    return { tool: 'write_file', args: { path: write[1], content: unquote(write[2]) } }
  }
  const read = READ.exec(text)
  if (read?.[1]) return { tool: 'read_file', args: { path: read[1] } }
  const quoted = RUN_QUOTED.exec(text)
  if (quoted?.[1]?.trim()) return { tool: 'exec_command', args: { cmd: quoted[1].trim() } }
  const line = RUN_LINE.exec(text)
  const cmd = line?.[1] ? unquote(line[1]) : ''
  if (cmd) return { tool: 'exec_command', args: { cmd } }
  return undefined
}

/** Trims the text and one pair of surrounding quotes or backticks. */
function unquote(text: string): string {
  const trimmed = text.trim()
  const match = /^(["'`])([\s\S]*)\1$/.exec(trimmed)
  return match?.[2] !== undefined ? match[2] : trimmed
}
