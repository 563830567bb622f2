import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { type CapBackends, describePendingCapAdmissions } from '../support/pending-cap.suite.ts'
import { describePendingCapRetries } from '../support/pending-cap-retries.suite.ts'

/** The pending-work cap as requests meet it, on the in-process store and coordinator. */
const memory = async (): Promise<CapBackends> => {
  const coordinator = new MemoryCoordinator()
  return {
    store: new MemoryObjectStore(),
    coordinators: [coordinator, coordinator],
    close: async () => undefined,
  }
}
describePendingCapAdmissions('memory', memory)
describePendingCapRetries('memory', memory)
