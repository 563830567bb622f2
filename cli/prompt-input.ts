import { CliError, EXIT } from './exit-codes.ts'

export interface StdinLike extends AsyncIterable<Buffer | string> {
  isTTY?: boolean
}

/**
 * The prompt of `exec`, as `vtcode exec` / `codex exec` take it: the argument, or stdin for `-`
 * or when the argument is omitted and stdin is not a terminal. Undefined when there is none.
 */
export async function readPrompt(
  arg: string | undefined,
  stdin: StdinLike,
): Promise<string | undefined> {
  if (arg !== undefined && arg !== '-') return arg.trim() === '' ? undefined : arg
  if (arg === undefined && stdin.isTTY) return undefined
  let text = ''
  for await (const chunk of stdin)
    text += typeof chunk === 'string' ? chunk : chunk.toString('utf8')
  if (arg === '-' && text.trim() === '') {
    throw new CliError('turnline: the prompt on stdin is empty', EXIT.usage)
  }
  return text.trim() === '' ? undefined : text.replace(/\s+$/, '')
}
