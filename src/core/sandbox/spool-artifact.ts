import type { OutputArtifact } from '../../contract/output-artifact.ts'
import { OUTPUT_CHUNK_BYTES } from '../../contract/output-artifact.ts'
import type { SandboxRunner, SandboxScope } from '../../ports/sandbox-runner.ts'
import { KeptOutput, type OutputKeeping } from '../tools/kept-output.ts'
import type { ExecResponse } from './exec-response.ts'
import type { ExecToolResult } from './exec-tools.ts'

/** How a session keeps command output over the inline limit: the store, and the limit. */
export interface SpoolKeeping {
  keeping: OutputKeeping
  /** Output longer than this many bytes is copied from the spool into an artifact. */
  inlineBytes: number
}

export type KeptSpool =
  | { kind: 'artifact'; artifact: OutputArtifact }
  /** Not kept: over a cap, or the spool could not be read; `reason` says which. */
  | { kind: 'not_kept'; reason: string }

/**
 * Copies a finished command's whole output from the runner's spool into an output artifact of
 * the session, one chunk a request (memory holds at most one chunk and its base64 text). The
 * spool lives in the workspace, which the command can change and which goes with the sandbox;
 * the artifact is immutable and outlives it. The same output copied again (a retried turn, a
 * second wait on an exited command) is the same artifact and adds no object.
 */
export async function keepSpool(
  runner: SandboxRunner,
  scope: SandboxScope,
  execSessionId: string,
  totalBytes: number,
  keeping: OutputKeeping,
): Promise<KeptSpool> {
  const kept = await KeptOutput.start(keeping)
  const early = await kept.expect(totalBytes)
  if (early !== undefined) return { kind: 'not_kept', reason: `the output exceeded ${early}` }
  for (;;) {
    const read = await runner.readSpool(scope, {
      execSessionId,
      offset: kept.written,
      length: OUTPUT_CHUNK_BYTES,
    })
    if (!read.ok) {
      await kept.abandon()
      return { kind: 'not_kept', reason: `its spool could not be read: ${read.refusal.message}` }
    }
    const refused = await kept.write(read.value.bytes)
    if (refused !== undefined) return { kind: 'not_kept', reason: `the output exceeded ${refused}` }
    if (read.value.eof || read.value.bytes.byteLength === 0) break
  }
  return { kind: 'artifact', artifact: await kept.finish() }
}

/**
 * A command tool's result with its whole output kept by reference: when the command has exited,
 * its spool is complete and its output is over the inline limit, the answer gains
 * `output_artifact_id` (or `output_artifact_error` saying why nothing was kept). Any other result
 * is answered unchanged.
 */
export async function withKeptOutput(
  result: ExecToolResult,
  runner: SandboxRunner,
  scope: SandboxScope,
  spool: SpoolKeeping | undefined,
): Promise<ExecToolResult> {
  if (!spool || result.kind !== 'done' || !('is_exited' in result.response)) return result
  const response = result.response
  if (!response.is_exited || response.spool_complete !== true) return result
  if (response.total_output_bytes <= spool.inlineBytes) return result
  const kept = await keepSpool(
    runner,
    scope,
    response.session_id,
    response.total_output_bytes,
    spool.keeping,
  )
  const answer: ExecResponse =
    kept.kind === 'artifact'
      ? { ...response, output_artifact_id: kept.artifact.id }
      : { ...response, output_artifact_error: `not kept as an artifact: ${kept.reason}` }
  return { ...result, response: answer, output: JSON.stringify(answer) }
}
