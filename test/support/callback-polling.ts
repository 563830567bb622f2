import { TurnlineClient } from '../../client/index.ts'
import type { DeliveryView } from '../../src/contract/callback-delivery.ts'
import { until } from './until.ts'

/** Polls `probe` (which may call the server) until it answers something: a minute at most. */
export function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  return until(what, probe, timeoutMs)
}

/** A session's callback deliveries through the typed client (which validates the answer). */
export async function listDeliveries(
  baseUrl: string,
  apiKey: string,
  session: string,
): Promise<DeliveryView[]> {
  const client = new TurnlineClient({ baseUrl, apiKey })
  return (await client.listDeliveries(session)).deliveries as DeliveryView[]
}
