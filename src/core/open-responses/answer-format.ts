import { checkArguments } from '../tools/tool-arguments.ts'
import type { OutputItem, ResponseError, TextFormatEcho } from './types.ts'

/**
 * Why a response's answer does not follow its `text.format` (`json_schema`: its last message is
 * JSON valid against the schema), or undefined when it does or the format is plain text. The
 * provider was asked for the format strictly; this catches a provider that did not keep to it.
 */
export function formatViolation(output: OutputItem[], format: TextFormatEcho): string | undefined {
  if (format.type !== 'json_schema') return undefined
  const message = output.findLast((item) => item.type === 'message')
  if (message?.type !== 'message') return `the answer holds no message in format ${format.name}`
  const text = message.content.map((part) => part.text).join('')
  const checked = checkArguments(text, format.schema)
  if (checked.ok) return undefined
  // The reason is worded for a tool's arguments.
  const reason = checked.reason
    .replace(/^arguments do not match the tool's schema: /, '')
    .replace(/^arguments are /, 'it is ')
    .replace(/^arguments must be /, 'it must be ')
  return `the answer does not follow text.format ${format.name}: ${reason}`
}

/** How a response whose turn completed ends, from the model's last stop reason and its answer. */
export interface ResponseEnd {
  status: 'completed' | 'failed' | 'incomplete'
  error: ResponseError | null
  /** Why it is `incomplete`: the answer was cut at `max_output_tokens`, or filtered. */
  incomplete?: { reason: string }
}

export function responseEnd(
  output: OutputItem[],
  format: TextFormatEcho,
  stopReason: string | undefined,
): ResponseEnd {
  if (stopReason === 'max_tokens') {
    return { status: 'incomplete', error: null, incomplete: { reason: 'max_output_tokens' } }
  }
  if (stopReason === 'content_filter') {
    return { status: 'incomplete', error: null, incomplete: { reason: 'content_filter' } }
  }
  const violation = formatViolation(output, format)
  return violation
    ? { status: 'failed', error: { code: 'model_error', message: violation } }
    : { status: 'completed', error: null }
}
