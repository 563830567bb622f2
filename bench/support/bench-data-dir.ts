import { spawnSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * Where the turn benches keep their stores by default: `.tmp/bench` in the checkout, the
 * filesystem and folder tree `npm start` keeps `.turnline/` in. Not the OS temp folder: on ext4
 * a new file's inode comes from its folder's group of inodes, and `/tmp`'s is shared with every
 * test run on the machine, whose thousands of made and deleted files make each create there
 * ≈ 30× slower (docs/performance.md, "fs store: thread crossings and syscalls on the steady turn").
 *
 * The folder is marked a top of directory hierarchies (`chattr +T`, ext2/3/4; elsewhere the
 * attempt fails and changes nothing), so ext4 places each run's folder in an inode group of its
 * own choosing, as for a folder at the filesystem's root, rather than beside the previous run's:
 * a run removes its data at the end, and on an ext4 without a journal (this VM) every file
 * created in a group skips each inode freed there in the last one to six minutes — the next run's
 * writes scanned the thousands its predecessor freed (docs/performance.md, "The server's process
 * tree, thread by thread").
 */
export function benchDataDir(): string {
  const dir = fileURLToPath(new URL('../../.tmp/bench', import.meta.url))
  mkdirSync(dir, { recursive: true })
  spawnSync('chattr', ['+T', dir], { stdio: 'ignore' })
  return dir
}
