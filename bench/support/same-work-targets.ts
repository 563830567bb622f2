/**
 * The same-work app (bench/support/same-work/app.ts: the raw loop's one turn behind a Hono POST)
 * on the runtimes bench/cold-start-platforms.ts starts Turnline on that have a filesystem:
 * through tsx beside `npm start`, bundled by esbuild onto plain node beside the built server,
 * and `deno serve` of its sources beside Deno. Not on workerd: a Worker has no filesystem to
 * append and fsync a file on, and its Turnline keeps sessions in the isolate's memory, so there
 * is no same durable write to compare with there.
 */
import { join } from 'node:path'
import { build } from 'esbuild'
import {
  type Command,
  DENO_ALLOW,
  denoServe,
  type Target,
  type TargetContext,
} from './cold-start-targets.ts'

const APP = 'bench/support/same-work/app.ts'
const NODE_ENTRY = 'bench/support/same-work/node.ts'

/** Where the same-work app's tool calls go and the secret it signs them with. */
export interface SameWorkTool {
  url: string
  secret: string
}

/**
 * `entry` of this checkout and what it imports as one ES module for plain node, written to
 * `outfile` (a `.mjs`): same-work/node.ts (Hono, @hono/node-server, the raw loop) beside the built
 * server, which is a bundle too; the Lambda bootstrap and handlers (lambda/targets.ts).
 */
export async function nodeBundle(here: string, entry: string, outfile: string): Promise<string> {
  await build({
    entryPoints: [join(here, entry)],
    bundle: true,
    format: 'esm',
    platform: 'node',
    outfile,
    logLevel: 'warning',
  })
  return outfile
}

/** The same-work app on each runtime asked for (`node`: tsx, `built`: plain node, `deno`). */
export async function sameWorkTargets(
  ctx: TargetContext,
  runtimes: string[],
  tool: SameWorkTool,
): Promise<Target[]> {
  const bin = (name: string) => join(ctx.here, 'node_modules/.bin', name)
  const env = (port: number, dir: string) => ({
    ...ctx.env(port, dir),
    SAME_WORK_TOOL_URL: tool.url,
    SAME_WORK_TOOL_SECRET: tool.secret,
  })
  const target = (
    name: string,
    runtime: Target['runtime'],
    file: string,
    args: (port: number) => string[],
  ): Target => ({
    name,
    runtime,
    kind: 'same work',
    command: (port, dir): Command => ({ file, args: args(port), env: env(port, dir) }),
  })
  const targets: Target[] = []
  if (runtimes.includes('node')) {
    targets.push(target('node: same-work app (tsx)', 'node', bin('tsx'), () => [NODE_ENTRY]))
  }
  if (runtimes.includes('built')) {
    const bundle = await nodeBundle(ctx.here, NODE_ENTRY, join(ctx.scratch, 'same-work-node.mjs'))
    targets.push(
      target('node: same-work app (plain node, bundled)', 'node-plain', process.execPath, () => [
        bundle,
      ]),
    )
  }
  if (runtimes.includes('deno')) {
    targets.push(
      target('deno: same-work app', 'deno', bin('deno'), (port) =>
        denoServe(port, APP, DENO_ALLOW),
      ),
    )
  }
  return targets
}
