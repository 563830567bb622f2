import type { OutputArtifact } from '../../contract/output-artifact.ts'
import type { OutputArtifacts } from '../../store/output-artifacts.ts'
import { joinBytes } from '../tools/join-bytes.ts'
import type { OutputKeeping } from '../tools/kept-output.ts'

/**
 * Bytes of a hook answer kept as an artifact that are read back to find its decision. A hook's
 * decision is a small JSON object; a longer answer is kept whole (the operators can read it; the
 * model only when a deny names it) but no decision is read from it: the hook failed, which a
 * fail-closed hook turns into a deny.
 */
export const HOOK_ANSWER_READ_BYTES = 1024 * 1024

/**
 * Where hook answers over the inline limit are kept (hidden from the model: hookDeps passes
 * OutputArtifacts.hidden()), and the limit.
 */
export interface HookKeeping {
  keeping: OutputKeeping
  /** Bytes of an answer read inline (TURNLINE_TOOL_MAX_RESPONSE_BYTES). */
  inlineBytes: number
}

/** How a kept answer is named in a hook's error or deny reason. */
export function keptAnswerNote(artifact: OutputArtifact): string {
  return `the hook's whole answer (${artifact.size} bytes) is kept as artifact ${artifact.id}`
}

/**
 * The text of a kept answer when it is short enough to read a decision from, else the error the
 * hook fails with.
 */
export async function keptAnswerText(
  outputs: OutputArtifacts,
  artifact: OutputArtifact,
): Promise<{ text: string } | { error: string }> {
  if (artifact.size > HOOK_ANSWER_READ_BYTES) {
    return {
      error:
        `answered ${artifact.size} bytes, more than the ${HOOK_ANSWER_READ_BYTES} a decision is ` +
        `read from; ${keptAnswerNote(artifact)}`,
    }
  }
  const parts: Uint8Array[] = []
  for await (const part of outputs.read(artifact)) parts.push(part)
  return { text: new TextDecoder().decode(joinBytes(parts)) }
}
