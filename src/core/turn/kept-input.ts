import { TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { TurnInput } from '../../contract/turn-input.ts'
import type { InputArtifactRef } from '../../contract/turn-input-record.ts'
import { groupDigits } from '../../shared/digit-groups.ts'
import { dayEndMs } from '../../shared/utc-day.ts'
import { utf8Length } from '../../shared/utf8-length.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { DEPLOYMENT_CAPS, KeptOutput, type OutputKeeping } from '../tools/kept-output.ts'
import { outputPreview, previewSizes } from '../tools/output-preview.ts'
import { outputKeeping } from '../tools/session-outputs.ts'

/** UTF-16 code units of a long text encoded and stored at once (about 256 KiB to 768 KiB). */
const SLICE_UNITS = 256 * 1024

/** Bytes a preview adds beyond its head and tail (the notice), at most. */
const NOTICE_BYTES = 512

export interface KeptInput {
  /** The input as the transcript, the model and the record get it: long texts as previews. */
  input: TurnInput
  /** The texts kept whole as artifacts, in the order they appear in the input. */
  artifacts: InputArtifactRef[]
}

export interface InputKeeping {
  keeping: OutputKeeping
  /** The inline limit (TURNLINE_TOOL_MAX_RESPONSE_BYTES): bytes of text given to the model whole. */
  limit: number
  now: () => number
}

/** How the session keeps texts of its inputs: as its tool outputs, past the inline limit. */
export function inputKeeping(deps: ServiceDeps, ref: SessionRef): InputKeeping {
  return {
    keeping: outputKeeping(deps, ref),
    limit: deps.tools.maxResponseBytes,
    now: () => deps.clock.now(),
  }
}

/**
 * A turn's input whose text is over the inline limit, kept the way a long tool output is: the
 * longest texts first, each is streamed into an output artifact of the session (one slice
 * encoded at a time) and replaced by a preview — its head and tail, its sizes and the artifact's
 * id, readable with `read_tool_output` — until the input's text is within the limit. A text
 * shorter than a preview stays as it is. An input within the limit is returned unchanged.
 *
 * The artifact counts against the same caps as tool outputs: over `TURNLINE_TOOL_MAX_OUTPUT_BYTES`
 * or what the session may still keep, 413 `payload_too_large`; over the tenant's daily
 * `output_bytes_per_day`, 429 `quota_exceeded` — before the turn opens, with nothing kept.
 */
export async function keepLongInput(input: TurnInput, options: InputKeeping): Promise<KeptInput> {
  const texts = typeof input === 'string' ? [input] : input.map(textOf)
  const sizes = texts.map((text) => (text === undefined ? 0 : utf8Length(text)))
  let total = sizes.reduce((sum, size) => sum + size, 0)
  if (total <= options.limit) return { input, artifacts: [] }
  const { head, tail } = previewSizes(options.limit)
  const order = sizes.map((size, index) => ({ size, index })).sort((a, b) => b.size - a.size)
  const kept = new Map<number, { text: string; artifact: InputArtifactRef }>()
  for (const { size, index } of order) {
    if (total <= options.limit || size <= head + tail + NOTICE_BYTES) break
    const text = texts[index] ?? ''
    const stored = await keepText(text, size, options)
    kept.set(index, stored)
    total += utf8Length(stored.text) - size
  }
  const artifacts = [...kept.keys()]
    .sort((a, b) => a - b)
    .flatMap((index) => {
      const found = kept.get(index)
      return found ? [found.artifact] : []
    })
  if (typeof input === 'string') return { input: kept.get(0)?.text ?? input, artifacts }
  const parts = input.map((part, index) => {
    const found = kept.get(index)
    return found && part.type === 'input_text' ? { ...part, text: found.text } : part
  })
  return { input: parts as typeof input, artifacts }
}

/**
 * A seeded transcript (the conversation a `POST /v1/responses` input carries before its last
 * user messages) with each user message over the inline limit kept the same way: its text
 * stored whole as an artifact, the message holding its preview. So is each tool message over
 * it — the output of a client's function call (`function_call_output`) — with a preview that
 * calls it an output, as a long tool answer's.
 */
export async function keepLongMessages(
  history: readonly HistoryMessage[],
  options: InputKeeping,
): Promise<HistoryMessage[]> {
  const kept: HistoryMessage[] = []
  for (const message of history) {
    if (message.role === 'user' && typeof message.content === 'string') {
      const { input } = await keepLongInput(message.content, options)
      kept.push(input === message.content ? message : { ...message, content: String(input) })
    } else if (message.role === 'tool') {
      const text = await keepLongText(message.content, options, 'output')
      kept.push(text === message.content ? message : { ...message, content: text })
    } else kept.push(message)
  }
  return kept
}

/**
 * One text (a client's tool output, a permission's follow-up answer) over the inline limit kept
 * whole as an artifact, answered as its preview (`what` names it in the notice); a text within
 * the limit, or shorter than a preview, is answered as it is.
 */
export async function keepLongText(
  text: string,
  options: InputKeeping,
  what: 'input' | 'output' = 'input',
): Promise<string> {
  const size = utf8Length(text)
  const { head, tail } = previewSizes(options.limit)
  if (size <= options.limit || size <= head + tail + NOTICE_BYTES) return text
  return (await keepText(text, size, options, what)).text
}

function textOf(part: Exclude<TurnInput, string>[number]): string | undefined {
  return part.type === 'input_text' ? part.text : undefined
}

/** Stores one text whole (`size` UTF-8 bytes) and answers its preview and reference. */
async function keepText(
  text: string,
  size: number,
  options: InputKeeping,
  what: 'input' | 'output' = 'input',
): Promise<{ text: string; artifact: InputArtifactRef }> {
  const { keeping } = options
  const kept = await KeptOutput.start(keeping)
  const refused = kept.tooLarge(size)
  if (refused !== undefined) throw tooLarge(size, keeping)
  const quota = await kept.expect(size)
  if (quota !== undefined) throw quotaExceeded(size, quota, options.now())
  const encoder = new TextEncoder()
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + SLICE_UNITS)
    // A surrogate pair stays in one slice, so it encodes as its character.
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--
    const late = await kept.write(encoder.encode(text.slice(at, end)))
    if (late !== undefined) throw quotaExceeded(size, late, options.now())
    at = end
  }
  const artifact = await kept.finish()
  const sizes = previewSizes(options.limit)
  const headBytes = encoder.encode(text.slice(0, sizes.head)).subarray(0, sizes.head)
  const tailText = encoder.encode(text.slice(-sizes.tail))
  const tailBytes = tailText.subarray(Math.max(0, tailText.byteLength - sizes.tail))
  return {
    text: outputPreview(artifact, headBytes, tailBytes, what),
    artifact: { artifact_id: artifact.id, size: artifact.size, lines: artifact.lines },
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff
}

/** 413: the text is over the most one artifact may have, or what the session may still keep. */
function tooLarge(size: number, keeping: OutputKeeping): TurnlineError {
  const own = size > keeping.maxBytes
  const max = own ? keeping.maxBytes : (keeping.maxSessionBytes ?? keeping.maxBytes)
  const settings = keeping.settings ?? DEPLOYMENT_CAPS
  const setting = own ? settings.perOutput : settings.perSession
  const what = own
    ? `the ${groupDigits(max)} bytes one input text or tool output may keep`
    : `what is left of the ${groupDigits(max)} bytes of inputs and tool outputs one session may keep`
  return new TurnlineError(
    'payload_too_large',
    `input: a text of ${groupDigits(size)} bytes is more than ${what} (${setting}); nothing was kept`,
    { details: { field: 'input', max_bytes: max, limit: setting } },
  )
}

/** 429: the tenant's daily quota of kept bytes would be passed. */
function quotaExceeded(size: number, reason: string, now: number): TurnlineError {
  const retryAfter = Math.max(1, Math.ceil((dayEndMs(now) - now) / 1000))
  return new TurnlineError(
    'quota_exceeded',
    `input: a text of ${groupDigits(size)} bytes would pass ${reason}; nothing was kept`,
    {
      retryable: true,
      retryAfter,
      details: { quota: 'output_bytes', field: 'input', retry_after_seconds: retryAfter },
    },
  )
}
