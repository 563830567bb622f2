import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { describePendingCapAdmissions } from '../support/pending-cap.suite.ts'

/** The pending-work cap as requests meet it, on the in-process store and coordinator. */
describePendingCapAdmissions('memory', async () => {
  const coordinator = new MemoryCoordinator()
  return {
    store: new MemoryObjectStore(),
    coordinators: [coordinator, coordinator],
    close: async () => undefined,
  }
})
