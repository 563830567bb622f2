import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { describeSessionStore } from './session-store.suite.ts'

describeSessionStore('fs', async () => {
  const root = await mkdtemp(join(tmpdir(), 'turnline-sessions-'))
  return {
    store: new FsObjectStore({ root }),
    cleanup: () => rm(root, { recursive: true, force: true }),
  }
})
