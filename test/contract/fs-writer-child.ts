/**
 * Child process for the fs store's writer-thread tests: once a first put has started the
 * writer threads, starts a create-only put of `<body>` at `<key>` under `<root>` without
 * awaiting it and with nothing else keeping the process alive, so the process stays up only as
 * long as that write does. With `delete` after them, only deletes `<key>` (missing): the store
 * starts its first writer thread and never sends it a request.
 */
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'

const [root, key, body, mode] = process.argv.slice(2)
if (!root || !key || body === undefined) throw new Error('usage: <root> <key> <body> [delete]')
const store = new FsObjectStore({ root })
const encode = (text: string) => new TextEncoder().encode(text)
if (mode === 'delete') {
  await store.delete(key)
} else {
  await store.put(`${key}.first`, encode('first'), { ifNoneMatch: '*' })
  void store.put(key, encode(body), { ifNoneMatch: '*' })
}
