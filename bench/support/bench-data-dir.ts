import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * Where the turn benches keep their stores by default: `.tmp/bench` in the checkout, the
 * filesystem and folder tree `npm start` keeps `.turnline/` in. Not the OS temp folder: on ext4
 * a new file's inode comes from its folder's group of inodes, and `/tmp`'s is shared with every
 * test run on the machine, whose thousands of made and deleted files make each create there
 * ≈ 30× slower (docs/performance.md, "fs store: thread crossings and syscalls on the steady turn").
 */
export function benchDataDir(): string {
  const dir = fileURLToPath(new URL('../../.tmp/bench', import.meta.url))
  mkdirSync(dir, { recursive: true })
  return dir
}
