import { readFileSync } from 'node:fs'
import { Validator } from '@cfworker/json-schema'

/**
 * Validation against the published Open Responses schema (vendored in
 * test/fixtures/open-responses/spec, see SOURCE.md there). Each standard event is checked
 * against the schema its `type` names, so a failure says which field is wrong; an unknown
 * un-prefixed event type is an error.
 *
 * The published item union lists only the standard items, while the specification's text
 * ("Extending Items", "Extending streaming events") allows items and events whose `type` carries
 * an implementor prefix and names the fields they must have. Those two rules are added here, and
 * nothing else is relaxed.
 */
type Schema = { [key: string]: unknown }
type JsonObject = { [key: string]: unknown }

const EXTENSION_TYPE = '^[a-z][a-z0-9_-]*:[A-Za-z0-9_.:-]+$'

const doc = JSON.parse(
  readFileSync(
    new URL('../fixtures/open-responses/spec/openapi-components.json', import.meta.url),
    'utf8',
  ),
) as { components: { schemas: Record<string, Schema> } }
/** The published schema as it is, closed unions and all: what strict clients validate against. */
const published = structuredClone(doc.components)
const schemas = doc.components.schemas

const itemField = schemas.ItemField as { oneOf: Schema[] }
schemas.ItemField = {
  ...itemField,
  oneOf: [
    ...itemField.oneOf,
    {
      type: 'object',
      required: ['type', 'id', 'status'],
      properties: {
        type: { type: 'string', pattern: EXTENSION_TYPE },
        id: { type: 'string' },
        status: { type: 'string' },
      },
    },
  ],
}
schemas.ExtensionStreamingEvent = {
  type: 'object',
  required: ['type', 'sequence_number'],
  properties: {
    type: { type: 'string', pattern: EXTENSION_TYPE },
    sequence_number: { type: 'integer' },
  },
}

const validators = new Map<string, Validator>()
function validatorFor(name: string, strict = false): Validator {
  const key = `${strict ? 'strict:' : ''}${name}`
  let validator = validators.get(key)
  if (!validator) {
    validator = new Validator(
      {
        $ref: `#/components/schemas/${name}`,
        components: strict ? published : doc.components,
      },
      '2020-12',
      false,
    )
    validators.set(key, validator)
  }
  return validator
}

/** Event `type` → the schema that defines it (from each event schema's `type` enum). */
const eventSchemaByType = new Map<string, string>()
for (const ref of (schemas.StreamingEvent as { oneOf: { $ref: string }[] }).oneOf) {
  const name = ref.$ref.split('/').at(-1)!
  const type = (schemas[name] as { properties: { type: { enum: string[] } } }).properties.type
    .enum[0]!
  eventSchemaByType.set(type, name)
}

function errorsOf(name: string, value: unknown, strict = false): string[] {
  const result = validatorFor(name, strict).validate(value)
  if (result.valid) return []
  return result.errors
    .filter((e) => !e.error.startsWith('A subschema had errors'))
    .map((e) => `${name}${e.instanceLocation.slice(1)}: ${e.error} (${e.keywordLocation})`)
}

/**
 * Errors of one streaming event against the schema; [] when it conforms. Without `extensions`
 * the published schema is applied as it is: an extension item or event is an error, as it is
 * to a strict client.
 */
export function streamEventErrors(event: JsonObject, extensions = true): string[] {
  const type = String(event.type)
  const name = eventSchemaByType.get(type)
  if (name) return errorsOf(name, event, !extensions)
  if (extensions && new RegExp(EXTENSION_TYPE).test(type)) {
    return errorsOf('ExtensionStreamingEvent', event)
  }
  return [`unknown event type ${JSON.stringify(type)}: not in the published schema`]
}

/** Errors of one item against the published item union (`ItemField`); [] when it conforms. */
export function itemErrors(item: unknown): string[] {
  return errorsOf('ItemField', item, true)
}

/** Errors of a response resource against the schema; [] when it conforms. */
export function responseResourceErrors(response: unknown, extensions = true): string[] {
  return errorsOf('ResponseResource', response, !extensions)
}

/**
 * Asserts every event conforms, naming the first that does not; `extensions: false` applies the
 * published schema unrelaxed (what a default client must be sent).
 */
export function assertConformingStream(
  events: readonly JsonObject[],
  options: { extensions?: boolean } = {},
): void {
  for (const event of events) {
    const errors = streamEventErrors(event, options.extensions ?? true)
    if (errors.length > 0) {
      throw new Error(
        `event ${String(event.sequence_number)} (${String(event.type)}) does not conform:\n` +
          `${errors.slice(0, 8).join('\n')}\n${JSON.stringify(event).slice(0, 600)}`,
      )
    }
  }
}

/** Errors of a WebSocket error message (`WebSocketErrorEvent`); [] when it conforms. */
export function socketErrorEventErrors(event: unknown): string[] {
  return errorsOf('WebSocketErrorEvent', event, true)
}
