import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { WriterThreadPool } from '../../adapters/fs/fs-writer-pool.ts'
import { WRITER_THREAD_SOURCE } from '../../adapters/fs/fs-writer-thread-source.ts'

// A real writer thread whose boot is held until the test opens its gate (a shared flag).
const GATED_SOURCE = `{
  const gate = new Int32Array(require('node:worker_threads').workerData)
  Atomics.wait(gate, 0, 0)
}
${WRITER_THREAD_SOURCE}`

describe('fs writer thread pool', () => {
  let root: string
  let pool: WriterThreadPool | undefined

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'turnline-fs-pool-'))
  })
  afterEach(async () => {
    await pool?.stop()
    await rm(root, { recursive: true, force: true })
  })

  it('queues a write on the running thread while a second thread boots, never on the booting one', async () => {
    const gate = new Int32Array(new SharedArrayBuffer(4))
    const workers: Worker[] = []
    pool = new WriterThreadPool(() => {
      const worker =
        workers.length === 0
          ? new Worker(WRITER_THREAD_SOURCE, { eval: true })
          : new Worker(GATED_SOURCE, { eval: true, workerData: gate.buffer })
      workers.push(worker)
      return worker
    })
    const order: string[] = []
    const write = (text: string) => {
      const bytes = new TextEncoder().encode(text)
      return pool!.send({ tmpDir: root, bytes, durable: false }, bytes).then((reply) => {
        order.push(text)
        return reply
      })
    }
    // The first write waits for the first thread: none is running yet.
    await write('w0')
    expect(pool.runningCount()).toBe(1)
    // Two overlapping writes: the second finds the running thread busy and starts another.
    const w1 = write('w1')
    const w2 = write('w2')
    expect(pool.count()).toBe(2)
    expect(pool.runningCount()).toBe(1)
    await w1
    // Sent after w2, while the second thread is still held: answered after w2 only when w2
    // went to the running thread too (on the booting one, w2 would wait for the gate).
    const w3 = write('w3')
    expect(pool.count()).toBe(2)
    const third = await w3
    expect(order).toEqual(['w0', 'w1', 'w2', 'w3'])
    expect(pool.runningCount()).toBe(1)
    expect(await readFile(third.temp!, 'utf8')).toBe('w3')
    expect(await readFile((await w2).temp!, 'utf8')).toBe('w2')
    // Opened, the second thread boots and takes writes like the first.
    const ready = new Promise((resolve) => workers[1]!.once('message', resolve))
    Atomics.store(gate, 0, 1)
    Atomics.notify(gate, 0)
    expect(await ready).toEqual({ ready: true })
    expect(pool.runningCount()).toBe(2)
    const [w4, w5] = await Promise.all([write('w4'), write('w5')])
    expect(await readFile(w5.temp!, 'utf8')).toBe('w5')
    expect(await readFile(w4.temp!, 'utf8')).toBe('w4')
    expect(workers).toHaveLength(2)
  })
})
