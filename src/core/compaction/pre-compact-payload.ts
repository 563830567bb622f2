import type { CompactionMode, CompactionTrigger } from '../../contract/enums.ts'

/**
 * The JSON a `pre_compact` hook reads on stdin, exactly VT Code's fields in its order. Hooks run
 * before the compaction boundary is recorded; their matcher compares against the trigger string.
 */
export interface PreCompactPayload {
  session_id: string
  cwd: string
  hook_event_name: 'PreCompact'
  transcript_path: string | null
  trigger: CompactionTrigger
  mode: CompactionMode
  original_message_count: number
  compacted_message_count: number
  history_artifact_path: string | null
}

export interface PreCompactInput {
  sessionId: string
  cwd: string
  transcriptPath?: string | undefined
  trigger: CompactionTrigger
  mode: CompactionMode
  originalMessageCount: number
  compactedMessageCount: number
  historyArtifactPath?: string | undefined
}

export function preCompactPayload(input: PreCompactInput): PreCompactPayload {
  return {
    session_id: input.sessionId,
    cwd: input.cwd,
    hook_event_name: 'PreCompact',
    transcript_path: input.transcriptPath ?? null,
    trigger: input.trigger,
    mode: input.mode,
    original_message_count: input.originalMessageCount,
    compacted_message_count: input.compactedMessageCount,
    history_artifact_path: input.historyArtifactPath ?? null,
  }
}
