import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { describeSessionStore } from './session-store.suite.ts'

describeSessionStore('memory', async () => ({
  store: new MemoryObjectStore(),
  cleanup: async () => {},
}))
