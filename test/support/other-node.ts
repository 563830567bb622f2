import { execFileSync } from 'node:child_process'
import { readFileSync, realpathSync } from 'node:fs'
import { delimiter, join } from 'node:path'

const root = new URL('../../', import.meta.url).pathname

/** A Node binary and what it says its version is (`v20.19.0`). */
export interface NodeBinary {
  bin: string
  version: string
}

/**
 * The Node release of the other supported major than the one running the tests: package.json's
 * `engines` allows Node 20 and Node 22+, the Docker image and the SAM template run Node 22, and
 * CI runs `npm test` on Node 22 with the machine's Node 20 further down PATH. Found on PATH
 * first; otherwise installed once (cached outside the clone) by infra/local/ensure-node.sh: for
 * Node 22 the release .ci/run pins, for Node 20 the oldest `engines` allows. So the conformance
 * run drives both majors wherever it runs, and a text that differs between their engines (Node
 * 20's `JSON.parse` message lacks the line and column Node 22 adds) fails it.
 */
export function otherNodeMajor(): NodeBinary {
  const current = Number(process.versions.node.split('.')[0])
  const wanted = current === 20 ? 22 : 20
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue
    const bin = join(dir, 'node')
    const version = versionOf(bin)
    if (version?.startsWith(`v${wanted}.`)) return { bin, version }
  }
  const release = wanted === 22 ? ciNode22Release() : oldestNode20Release()
  const folder = execFileSync('bash', [join(root, 'infra/local/ensure-node.sh'), release], {
    encoding: 'utf8',
    timeout: 300_000,
  }).trim()
  const bin = join(folder, 'node')
  const version = versionOf(bin)
  if (version !== `v${release}`) throw new Error(`${bin} is not Node ${release} (${version})`)
  return { bin, version }
}

/** The binary a running process executes (Linux: /proc), to check which Node a child runs. */
export function executableOf(pid: number): string {
  return realpathSync(`/proc/${pid}/exe`)
}

function versionOf(bin: string): string | undefined {
  try {
    return execFileSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000 }).trim()
  } catch {
    return undefined
  }
}

function ciNode22Release(): string {
  const ci = readFileSync(join(root, '.ci/run'), 'utf8')
  const release = /^NODE22_VERSION=(\S+)$/m.exec(ci)?.[1]
  if (release === undefined) throw new Error('.ci/run names no NODE22_VERSION')
  return release
}

function oldestNode20Release(): string {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    engines: { node: string }
  }
  const release = /\^(20\.\d+\.\d+)/.exec(pkg.engines.node)?.[1]
  if (release === undefined) throw new Error(`engines.node allows no Node 20: ${pkg.engines.node}`)
  return release
}
