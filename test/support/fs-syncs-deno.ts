import { folderFsyncsHere } from '../../adapters/fs/fs-folder-handles.ts'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { writerThreadFsyncs } from '../../adapters/fs/fs-writer-threads.ts'

declare const Deno: { args: string[]; exit(code: number): never }

/**
 * `deno run --allow-read --allow-write --allow-env fs-syncs-deno.ts ROOT COUNT`: makes one object in a folder
 * of a new fs store at ROOT, then COUNT more by create-only puts into that folder, and prints the
 * fsyncs those COUNT puts made, on the writer threads and on this thread, as JSON.
 * test/runtime/deno-fs-durability.test.ts.
 */
const [root, count] = Deno.args as [string, string]
const store = new FsObjectStore({ root })
const body = new TextEncoder().encode('{}')
await store.put('folder/first.json', body, { ifNoneMatch: '*' })
const [threads, here] = [writerThreadFsyncs(), folderFsyncsHere()]
for (let i = 0; i < Number(count); i++) {
  await store.put(`folder/object-${i}.json`, body, { ifNoneMatch: '*' })
}
console.log(
  JSON.stringify({ threads: writerThreadFsyncs() - threads, here: folderFsyncsHere() - here }),
)
Deno.exit(0)
