import { readFile } from 'node:fs/promises'
import { Validator } from '@cfworker/json-schema'
import { CliError, EXIT } from './exit-codes.ts'

/** `--output-schema FILE`: the JSON Schema, read and checked before anything runs. */
export async function loadOutputSchema(path: string): Promise<Record<string, unknown>> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new CliError(
      `--output-schema: cannot read ${path}: ${(error as Error).message}`,
      EXIT.usage,
    )
  }
  let schema: unknown
  try {
    schema = JSON.parse(text)
  } catch (error) {
    throw new CliError(
      `--output-schema: ${path} is not JSON: ${(error as Error).message}`,
      EXIT.usage,
    )
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new CliError(`--output-schema: ${path} must hold a JSON Schema object`, EXIT.usage)
  }
  return schema as Record<string, unknown>
}

/**
 * Checks the final answer against the schema (draft 2020-12). The provider is asked for this
 * shape (strict structured output), but not every OpenAI-compatible server honours it, so the
 * CLI verifies: a mismatch is reported and gives its own exit code.
 */
export function checkAnswer(
  answer: string | undefined,
  schema: Record<string, unknown>,
): { ok: true } | { ok: false; reason: string } {
  if (answer === undefined || answer.trim() === '')
    return { ok: false, reason: 'there is no final answer' }
  let value: unknown
  try {
    value = JSON.parse(answer)
  } catch {
    return { ok: false, reason: 'the final answer is not JSON' }
  }
  const result = new Validator(
    schema as ConstructorParameters<typeof Validator>[0],
    '2020-12',
    false,
  ).validate(value)
  if (result.valid) return { ok: true }
  const problems = result.errors
    .slice(0, 4)
    .map((e) => `${e.instanceLocation || '#'}: ${e.error}`)
    .join('; ')
  return { ok: false, reason: `the final answer does not match: ${problems}` }
}
