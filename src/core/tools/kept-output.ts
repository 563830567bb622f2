import { OUTPUT_CHUNK_BYTES, type OutputArtifact } from '../../contract/output-artifact.ts'
import type { OutputArtifacts, OutputArtifactWriter } from '../../store/output-artifacts.ts'

/** The tenant's daily quota of kept output, as the tools meet it (Admission.keepOutput). */
export interface OutputQuota {
  /** Counts `bytes` more; the reason (words for the model) when that would pass the quota. */
  take(bytes: number): Promise<string | undefined>
  /** Gives back bytes taken for output that was not kept. Never rejects. */
  give(bytes: number): Promise<void>
}

/** Where outputs over the inline limit go, and how much may be kept. */
export interface OutputKeeping {
  artifacts: OutputArtifacts
  /** Bytes one output may have in all; a larger one is refused (nothing of it is kept). */
  maxBytes: number
  /** Bytes the session's artifacts may hold in all; an answer that would pass it is refused. */
  maxSessionBytes?: number
  /**
   * The settings the caps come from, as errors name them: the deployment's
   * (`TURNLINE_TOOL_MAX_OUTPUT_BYTES`, `TURNLINE_TOOL_MAX_SESSION_OUTPUT_BYTES`, the default) or
   * the tenant's lower ones (`output_bytes_per_output`, `output_bytes_per_session`).
   */
  settings?: { perOutput: string; perSession: string }
  /** The tenant's daily quota of kept output; absent: not counted. */
  quota?: OutputQuota
}

/** The deployment's settings of the caps on kept output. */
export const DEPLOYMENT_CAPS = {
  perOutput: 'TURNLINE_TOOL_MAX_OUTPUT_BYTES',
  perSession: 'TURNLINE_TOOL_MAX_SESSION_OUTPUT_BYTES',
} as const

/** Bytes one output may have now (the cap on one output, or what the session has left), and why. */
export async function outputCap(
  keeping: OutputKeeping,
): Promise<{ bytes: number; reason: string }> {
  const settings = keeping.settings ?? DEPLOYMENT_CAPS
  const own = {
    bytes: keeping.maxBytes,
    reason: `${keeping.maxBytes} bytes, the most one tool output may have (${settings.perOutput})`,
  }
  if (keeping.maxSessionBytes === undefined) return own
  const left = keeping.maxSessionBytes - (await keeping.artifacts.storedBytes())
  if (left >= own.bytes) return own
  return {
    bytes: Math.max(0, left),
    reason:
      `the ${keeping.maxSessionBytes} bytes of tool outputs one session may keep ` +
      `(${settings.perSession})`,
  }
}

/**
 * One output on its way into an output artifact, within every cap: the most one output may have,
 * what the session may still keep (both known when it starts) and the tenant's daily quota,
 * counted before the bytes are stored — all at once when the size is known (`expect`), else in
 * steps of a chunk, so a 50 MB answer asks about 50 times, not once per read — and given back for
 * what the output did not keep. An output refused
 * by any of them leaves nothing stored (`write` answers why; the chunks already written are
 * deleted, their count given back).
 */
export class KeptOutput {
  #taken = 0

  private constructor(
    private readonly writer: OutputArtifactWriter,
    private readonly cap: { bytes: number; reason: string },
    private readonly quota: OutputQuota | undefined,
  ) {}

  static async start(keeping: OutputKeeping): Promise<KeptOutput> {
    return new KeptOutput(keeping.artifacts.writer(), await outputCap(keeping), keeping.quota)
  }

  /** Bytes taken so far. */
  get written(): number {
    return this.writer.written
  }

  /** Why an output of `bytes` in all cannot be kept (undefined: it may be, quota permitting). */
  tooLarge(bytes: number): string | undefined {
    return bytes > this.cap.bytes ? this.cap.reason : undefined
  }

  /**
   * Counts an output whose size is known before it arrives (a Content-Length, an MCP result, a
   * command's spool) all at once: outputs racing for the last of a quota are then kept or refused
   * whole, instead of each holding part of it and all being refused. The reason when a cap
   * refuses it (nothing is counted then).
   */
  async expect(bytes: number): Promise<string | undefined> {
    return this.tooLarge(bytes) ?? (await this.#take(bytes, { exact: true }))
  }

  /**
   * Stores `bytes` after what was written; the reason when a cap refuses them — then nothing of
   * the output is kept and the writer is done with.
   */
  async write(bytes: Uint8Array): Promise<string | undefined> {
    const need = this.writer.written + bytes.byteLength
    const refused = this.tooLarge(need) ?? (await this.#take(need))
    if (refused !== undefined) {
      await this.abandon()
      return refused
    }
    try {
      await this.writer.write(bytes)
    } catch (error) {
      await this.abandon().catch(() => undefined)
      throw error
    }
    return undefined
  }

  /** The artifact, once every byte is written; what was taken beyond them is given back. */
  async finish(): Promise<OutputArtifact> {
    const artifact = await this.writer.finish()
    await this.#give(this.#taken - artifact.size)
    return artifact
  }

  /** Keeps nothing of the output: its chunks deleted, what it took of the quota given back. */
  async abandon(): Promise<void> {
    await this.#give(this.#taken)
    await this.writer.discard()
  }

  async #take(need: number, options = { exact: false }): Promise<string | undefined> {
    if (!this.quota || need <= this.#taken) return undefined
    const chunkStep = Math.max(need, this.#taken + OUTPUT_CHUNK_BYTES)
    const step = options.exact ? need : Math.min(this.cap.bytes, chunkStep)
    let refused = await this.quota.take(step - this.#taken)
    if (refused === undefined) {
      this.#taken = step
      return undefined
    }
    // A whole step may not fit where the bytes themselves do.
    if (step === need) return refused
    refused = await this.quota.take(need - this.#taken)
    if (refused === undefined) this.#taken = need
    return refused
  }

  async #give(bytes: number): Promise<void> {
    if (!this.quota || bytes <= 0) return
    this.#taken -= bytes
    await this.quota.give(bytes)
  }
}
