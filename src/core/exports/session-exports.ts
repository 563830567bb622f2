import type { EngineState } from '../../contract/engine-state.ts'
import { responseRecordOf } from '../../contract/open-responses-record.ts'
import { PRODUCT_NAME, PRODUCT_VERSION } from '../../contract/product.ts'
import { serializeEvent } from '../../contract/serialize.ts'
import type { ParsedThreadEvent } from '../../contract/thread-event.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { serviceLog } from '../engine/service-log.ts'
import { resolveModelSettings } from '../model/model-settings.ts'
import { writeOpenResponsesView } from '../open-responses/derived-view.ts'
import { itemIdScope } from '../open-responses/item-ids.ts'
import { responseSettingsOf } from '../open-responses/response-record.ts'
import { readSessionEvents } from '../session/read-session-events.ts'
import { readKeptHookAnswers } from '../tools/read-kept-outputs.ts'
import { sessionOutputs } from '../tools/session-outputs.ts'
import { atifTrajectoryText } from './atif-trajectory.ts'

/**
 * A session's exports besides the canonical store, all best effort (a failure is logged, never
 * fails the turn, and the canonical store is never touched): the bare-event JSONL at
 * `harness.event_log_path` after every turn, and when the thread completes the derived views
 * `derived/open-responses.jsonl` (`harness.open_responses_enabled`, default on) and
 * `derived/atif-trajectory.json` (`harness.atif_enabled`, default off).
 * Long: each export in its own best-effort block, in order.
 */
export async function writeSessionExports(
  deps: ServiceDeps,
  ref: SessionRef,
  state: EngineState,
  session: { createdAt: string; finished: boolean },
): Promise<void> {
  const harness = state.config.harness
  const eventLog = harness.event_log_path
  const openResponses = session.finished && harness.open_responses_enabled !== false
  const atif = session.finished && harness.atif_enabled === true
  if (!eventLog && !openResponses && !atif) return
  const log = serviceLog(deps)
  let events: ParsedThreadEvent[]
  try {
    events = await readSessionEvents(deps, ref)
  } catch (error) {
    log({
      msg: 'session exports: reading the events failed',
      session: ref.sessionId,
      error: String(error),
    })
    return
  }
  const keys = deps.sessions.keys(ref)
  const model = resolveModelSettings(state.config.model, deps.defaults)?.name
  const attempt = async (what: string, write: () => Promise<unknown>) => {
    try {
      await write()
    } catch (error) {
      log({
        msg: 'session exports: writing a file failed',
        session: ref.sessionId,
        path: what,
        error: String(error),
      })
    }
  }
  if (eventLog) {
    const path = eventLogObjectPath(eventLog, ref.sessionId, session.createdAt)
    await attempt(path, () =>
      deps.sessions.objects.put(
        keys.workspaceObject(path),
        new TextEncoder().encode(events.map((event) => `${serializeEvent(event)}\n`).join('')),
        { contentType: 'application/x-ndjson' },
      ),
    )
  }
  if (openResponses) {
    await attempt('derived/open-responses.jsonl', () =>
      writeOpenResponsesView(deps.sessions.objects, keys, events, {
        ...responseSettingsOf(state.config, model ?? 'default'),
        ...(responseRecordOf(state.config)?.scoped_item_ids
          ? { itemIds: itemIdScope(ref.sessionId) }
          : {}),
        ...(state.reasoning_tokens ? { reasoningTokens: state.reasoning_tokens } : {}),
      }),
    )
  }
  if (atif) {
    await attempt('derived/atif-trajectory.json', async () => {
      const agent = { name: PRODUCT_NAME, version: PRODUCT_VERSION, ...(model ? { model } : {}) }
      const text = atifTrajectoryText(events, agent, await keptHookAnswers(deps, ref, state))
      await deps.sessions.objects.put(
        atifTrajectoryKey(keys.root),
        new TextEncoder().encode(text),
        {
          contentType: 'application/json',
        },
      )
    })
  }
}

/**
 * The hook answers the session kept whole, which the trajectory names (no event does): read from
 * its batches, only when it has hooks.
 */
async function keptHookAnswers(deps: ServiceDeps, ref: SessionRef, state: EngineState) {
  if (state.config.hooks.length === 0) return []
  const { lastBatch } = await deps.sessions.open(ref)
  const objects = deps.sessions.objects
  return readKeptHookAnswers(objects, deps.sessions.keys(ref), sessionOutputs(deps, ref), lastBatch)
}

/** Key of a session's ATIF trajectory: `<session root>derived/atif-trajectory.json`. */
export function atifTrajectoryKey(sessionRoot: string): string {
  return `${sessionRoot}derived/atif-trajectory.json`
}

/**
 * VT Code's rule for `event_log_path`: a path whose last segment has an extension is the file;
 * otherwise it is a folder and the file is `harness-<session>-<YYYYMMDDTHHMMSSZ>.jsonl` (the
 * stamp is the session's creation time, so every turn rewrites the same object).
 */
export function eventLogObjectPath(path: string, sessionId: string, createdAt: string): string {
  const last = path.split('/').at(-1) ?? ''
  if (last.replace(/^\./, '').includes('.')) return path
  const time = new Date(createdAt)
  const iso = Number.isNaN(time.getTime()) ? '19700101T000000Z' : time.toISOString()
  const stamp = iso.replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '')
  return `${path}/harness-${sessionId}-${stamp}.jsonl`
}
