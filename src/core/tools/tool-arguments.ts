import { Validator } from '@cfworker/json-schema'
import { PARSED_JSON_MAX_DEPTH } from '../../contract/exact-json.ts'
import { nestedDeeperThan } from '../../shared/json-depth.ts'
import { parseJson } from '../../shared/json-syntax.ts'
import { schemaForArguments } from './schema-patterns.ts'

export type ArgumentCheck =
  | { ok: true; value: Record<string, unknown> }
  | { ok: false; reason: string }

/**
 * Compiled validators by schema text: a session's tool schemas are fresh objects in every
 * invocation (the engine state is copied), so identity would never hit. Bounded: emptied when
 * full.
 */
const validators = new Map<string, Validator>()
const VALIDATORS_MAX = 256

/**
 * Parses the model's raw argument text and validates it against the tool's JSON Schema
 * (draft 2020-12, no code generation, so it runs in workerd). The reason is written for the
 * model: it is told exactly what was wrong so it can call again. Arguments nested deeper than
 * {@link PARSED_JSON_MAX_DEPTH} are refused before the validator, which recurses with the value
 * (a recursive schema overflowed the stack at 200 levels: the turn failed with a RangeError).
 * JavaScript's engine never runs the schema's regular expressions (a backtracking one held the
 * process every tenant shares for as long as it ran): schemaForArguments runs them with the
 * linear engine and hands the validator, for each, the literal list of what it matched; those
 * the linear engine refuses are left to the tool's server.
 */
export function checkArguments(raw: string, schema: Record<string, unknown>): ArgumentCheck {
  const parsed = raw.trim() === '' ? { ok: true as const, value: {} } : parseJson(raw)
  if (!parsed.ok) return { ok: false, reason: `arguments are not valid JSON: ${parsed.reason}` }
  const value = parsed.value
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'arguments must be a JSON object' }
  }
  if (nestedDeeperThan(value, PARSED_JSON_MAX_DEPTH)) {
    return { ok: false, reason: `arguments are nested deeper than ${PARSED_JSON_MAX_DEPTH} levels` }
  }
  const text = JSON.stringify(schema)
  // Only a schema that may hold a pattern is copied and rewritten; one rewritten for this
  // value's strings serves it alone: built, not kept.
  const checked = text.includes('"pattern') ? schemaForArguments(schema, value) : undefined
  const perValue = checked?.perValue === true
  let validator = perValue ? undefined : validators.get(text)
  if (!validator) {
    validator = new Validator(
      structuredClone(checked?.schema ?? schema) as ConstructorParameters<typeof Validator>[0],
      '2020-12',
      false,
    )
    if (!perValue) {
      if (validators.size >= VALIDATORS_MAX) validators.clear()
      validators.set(text, validator)
    }
  }
  const result = validator.validate(value)
  if (result.valid) return { ok: true, value: value as Record<string, unknown> }
  const problems = result.errors
    .filter((e) => e.error && !e.error.startsWith('Property'))
    .slice(0, 5)
    .map((e) => `${e.instanceLocation || '#'}: ${e.error}`)
  const fallback = result.errors.slice(0, 5).map((e) => `${e.instanceLocation || '#'}: ${e.error}`)
  return {
    ok: false,
    reason: `arguments do not match the tool's schema: ${(problems.length ? problems : fallback).join('; ')}`,
  }
}
