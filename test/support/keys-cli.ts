import { runKeysCommand } from '../../functions/tenancy/keys-command.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'

/** The `keys` command on `store`, its output lines kept; `stdin` is what `hash` reads. */
export function keysCli(store: ObjectStore, stdin: string) {
  const out: string[] = []
  const err: string[] = []
  const run = (...argv: string[]) =>
    runKeysCommand(argv, () => store, {
      out: (line) => out.push(line),
      err: (line) => err.push(line),
      stdin: async () => `${stdin}\n`,
    })
  return { run, out, err }
}
