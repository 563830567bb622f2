import {
  encodeResponseRecord,
  RESPONSE_RECORD_KEY,
  responseRecordOf,
} from '../../contract/open-responses-record.ts'
import type { SessionConfig } from '../../contract/session-config.ts'
import { assertSameRequest, canonicalJson } from '../engine/idempotency.ts'

/**
 * A retry of a run whose session derives from its Idempotency-Key (`POST /v1/responses`,
 * `POST /v1/exec`), whose session exists, must be the request the key was first used with. The
 * turn's own check covers its input only; the rest of the request (model, instructions, tools,
 * and for a response `previous_response_id`, `text`, `max_tool_calls`, metadata …) is the
 * session's config, so the config the retry would start with is compared with the stored one,
 * but for the second a response was created in; the record's digest of the conversation the
 * input carried covers the rest of a response's input. Otherwise another body under the key would
 * silently get the first answer instead of 422 `idempotency_key_reused`.
 */
export function assertSameConfig(stored: SessionConfig, retry: SessionConfig): void {
  // A response recorded before its conversation's digest was kept is compared without it.
  const digested = responseRecordOf(stored)?.input_digest !== undefined
  const first = requestOf(stored, { digested })
  const again = requestOf(retry, { digested })
  assertSameRequest(first, { key: '', fingerprint: again })
}

/**
 * The config as the request made it, with a response's creation second and how its item ids
 * are shown left out (and its conversation's digest, unless `digested`).
 */
function requestOf(config: SessionConfig, { digested }: { digested: boolean }): string {
  const record = responseRecordOf(config)
  if (record === undefined) return canonicalJson(config)
  // How its item ids are shown is the server's, not the request's (absent in older records).
  const { input_digest, scoped_item_ids: _shown, ...rest } = record
  const compared = { ...rest, created_at: 0, ...(digested ? { input_digest } : {}) }
  const metadata = { ...config.metadata, [RESPONSE_RECORD_KEY]: encodeResponseRecord(compared) }
  return canonicalJson({ ...config, metadata })
}
