import { describe } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { loopEntryRaces } from '../support/loop-entry-races.ts'

describe('a pass deleting a loop entry while a start writes it again (memory store)', () => {
  loopEntryRaces(() => new MemoryObjectStore())
})
