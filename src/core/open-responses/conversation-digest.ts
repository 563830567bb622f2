import {
  encodeResponseRecord,
  parseRecordOf,
  RESPONSE_RECORD_KEY,
} from '../../contract/open-responses-record.ts'
import type { ResponseRun } from '../../contract/open-responses-run.ts'
import { sha256HexOfText } from '../../shared/sha256-small.ts'
import { canonicalJson } from '../engine/idempotency.ts'

/**
 * A response run whose record carries the digest of the conversation its request's `input`
 * brought (`input_digest`): the turn's own fingerprint covers only the trailing user messages,
 * and the config only the settings, so without it a retry under the same Idempotency-Key with
 * other earlier messages or other function outputs was answered with the first response.
 */
export async function withConversationDigest(run: ResponseRun): Promise<ResponseRun> {
  const metadata = run.config.metadata ?? {}
  const record = parseRecordOf(metadata[RESPONSE_RECORD_KEY])
  if (record === undefined) return run
  const digest = await sha256HexOfText(
    canonicalJson({ history: run.history, compacted: run.compacted === true }),
  )
  const encoded = encodeResponseRecord({ ...record, input_digest: digest })
  return {
    ...run,
    config: { ...run.config, metadata: { ...metadata, [RESPONSE_RECORD_KEY]: encoded } },
  }
}
