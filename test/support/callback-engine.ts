import type { WorkLocation } from '../../src/contract/work-record.ts'
import { CallbackOutbox } from '../../src/core/callbacks/callback-outbox.ts'
import type { CallbackContext } from '../../src/core/callbacks/callback-sender.ts'
import { SessionService } from '../../src/core/session-service.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { testCallbackPolicy } from './callback-policy.ts'
import { engineDeps } from './engine-deps.ts'
import { ScriptedModelClient } from './scripted-model.ts'
import type { TestClock } from './test-clock.ts'

/** A receiver behind `fetch` that accepts every request and records it. */
export function acceptingReceiver() {
  const got: Request[] = []
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    got.push(new Request(input, init))
    return new Response('{}', { status: 200 })
  }) as typeof fetch
  return { got, fetch: fetchImpl }
}

/**
 * The real engine on `store` with a callback outbox (signing with `secret`) and the sweep's
 * context: what the callback unit tests run on.
 */
export function callbackEngine(
  store: ObjectStore,
  clock: TestClock,
  fetchImpl: typeof fetch,
  secret: string,
) {
  const model = new ScriptedModelClient()
  const deps = engineDeps({ store, model, fetch: fetchImpl, clock }, [])
  const sessions = new SessionStore({ store })
  const callbacks = {
    outbox: new CallbackOutbox(sessions),
    policy: testCallbackPolicy(fetchImpl, 'a', secret),
  }
  const service = new SessionService({ ...deps, sessions, callbacks })
  const ctx: CallbackContext = { ...callbacks, clock, log: () => {} }
  return { model, service, ctx, sessions }
}

/** Where a background work record is, from the 202 that answered it. */
export const workAt = (
  tenant: string,
  work: { session_id: string; work_id: string },
): WorkLocation => ({ tenant, session_id: work.session_id, work_id: work.work_id })
