// A probe a bench loads into a server process (`node --import <this file> …`) to measure its
// garbage collection and allocation over a window the bench chooses: the first SIGUSR2 starts the
// window (the GC counters reset, V8's sampling heap profiler started with the objects later
// collected kept in the profile, so it counts every byte allocated, not only what is still live),
// the process's exit ends it and writes a JSON report to TURNLINE_GC_PROBE_OUT: GC count and
// pause time by kind (PerformanceObserver 'gc' entries), CPU used, heap statistics and the
// sampled allocation profile (Chrome's .heapprofile form, `selfSize` scaled to estimated bytes).
//
// Plain Node ESM, no dependencies: it runs in any revision's server.
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector'
import { constants, PerformanceObserver } from 'node:perf_hooks'
import v8 from 'node:v8'

const out = process.env.TURNLINE_GC_PROBE_OUT
const interval = Number(process.env.TURNLINE_GC_PROBE_INTERVAL ?? 16384)
const KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
}

let gc = {}
let started
const observer = new PerformanceObserver((list) => {
  if (!started) return
  for (const entry of list.getEntries()) {
    const kind = KINDS[entry.detail?.kind ?? entry.kind] ?? 'other'
    const k = gc[kind] ?? { count: 0, ms: 0 }
    k.count++
    k.ms += entry.duration
    gc[kind] = k
  }
})
observer.observe({ entryTypes: ['gc'] })

const session = new Session()
session.connect()
const post = (method, params) =>
  new Promise((resolve, reject) =>
    session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
  )

process.on('SIGUSR2', () => {
  if (started) return
  gc = {}
  started = {
    at: performance.now(),
    cpu: process.cpuUsage(),
    heap: v8.getHeapStatistics(),
  }
  post('HeapProfiler.startSampling', {
    samplingInterval: interval,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  }).catch((error) => console.error('gc-alloc-probe:', error))
})

process.on('exit', () => {
  if (!started || !out) return
  // The in-process inspector answers synchronously, so this runs to its end inside 'exit'.
  session.post('HeapProfiler.getSamplingProfile', (error, result) => {
    const cpu = process.cpuUsage(started.cpu)
    const report = {
      windowMs: performance.now() - started.at,
      cpuMs: (cpu.user + cpu.system) / 1000,
      gc,
      heapBefore: started.heap,
      heapAfter: v8.getHeapStatistics(),
      rssBytes: process.memoryUsage().rss,
      samplingInterval: interval,
      profile: error ? null : result.profile,
    }
    writeFileSync(out, JSON.stringify(report))
  })
})
