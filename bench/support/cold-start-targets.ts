/**
 * What bench/cold-start-platforms.ts starts: Turnline on each runtime from a source tree (this
 * checkout, or an earlier revision's for an A/B), and the trivial Hono app on the same runtimes
 * (the same-work app is in same-work-targets.ts).
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { MODEL, TOOL_MASTER_SECRET } from './turn-cost-scenario.ts'
import {
  compatibility,
  describeWorkerBundle,
  trivialWorker,
  type WorkerModule,
  workerBundle,
  workerdBin,
  workerdConfig,
} from './workerd-bundle.ts'

export type Runtime = 'node' | 'node-plain' | 'deno' | 'workerd' | 'lambda'

export interface Command {
  file: string
  args: string[]
  env: Record<string, string>
  /** The folder it starts in (default: this checkout). */
  cwd?: string
}

/**
 * `trivial`: the trivial Hono app (answers a POST with its JSON); `same work`: the same-work app
 * (answers a POST after the raw loop's one turn); both are floors Turnline is compared with.
 */
export type TargetKind = 'turnline' | 'trivial' | 'same work'

export interface Target {
  name: string
  runtime: Runtime
  kind: TargetKind
  /**
   * `port`: where it listens (on Lambda: the port of the Runtime API it polls, lambda/front.ts).
   */
  command: (port: number, dir: string) => Command | Promise<Command>
  /** Headers of its requests (a Lambda function with API keys). */
  auth?: Record<string, string>
}

export interface TargetContext {
  /** This checkout. */
  here: string
  /** A scratch folder for bundles. */
  scratch: string
  /** The environment of a start: PORT, TURNLINE_DATA_DIR under `dir`, the mock and receiver. */
  env: (port: number, dir: string) => Record<string, string>
}

/** A source tree to start Turnline from: this checkout (label '') or an earlier revision's. */
export interface SourceTree {
  label: string
  root: string
}

/**
 * The environment of every start: PORT, TURNLINE_DATA_DIR under the start's own folder `dir`,
 * the mock model at `modelURL`, the scenario's model and tool master secret.
 */
export const startEnv =
  (modelURL: string) =>
  (port: number, dir: string): Record<string, string> => ({
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    PORT: String(port),
    TURNLINE_DATA_DIR: join(dir, 'data'),
    OPENAI_BASE_URL: modelURL,
    OPENAI_API_KEY: 'bench',
    TURNLINE_MODEL: MODEL,
    TURNLINE_TOOL_SECRET: TOOL_MASTER_SECRET,
    DENO_NO_UPDATE_CHECK: '1',
    NO_COLOR: '1',
  })

export const DENO_ALLOW = ['--allow-net', '--allow-env', '--allow-read', '--allow-write']

export const denoServe = (port: number, module: string, extra: string[]) => [
  'serve',
  '--host',
  '127.0.0.1',
  '--port',
  String(port),
  ...extra,
  module,
]

/** The trivial Hono app on each runtime: the floor Turnline's start is compared with. */
export async function trivialTargets(ctx: TargetContext, runtimes: string[]): Promise<Target[]> {
  const bin = (name: string) => join(ctx.here, 'node_modules/.bin', name)
  const targets: Target[] = []
  const plain = (
    name: string,
    runtime: Runtime,
    file: string,
    args: (port: number) => string[],
  ): Target => ({
    name,
    runtime,
    kind: 'trivial',
    command: (port, dir) => ({ file, args: args(port), env: ctx.env(port, dir) }),
  })
  if (runtimes.includes('node')) {
    targets.push(
      plain('node: trivial Hono app (tsx)', 'node', bin('tsx'), () => [
        'bench/support/trivial/hono-node.ts',
      ]),
    )
  }
  if (runtimes.includes('built')) {
    targets.push(
      plain('node: trivial Hono app (plain node)', 'node-plain', process.execPath, () => [
        'bench/support/trivial/hono-node.mjs',
      ]),
    )
  }
  if (runtimes.includes('deno')) {
    targets.push(
      plain('deno: trivial Hono app', 'deno', bin('deno'), (port) =>
        denoServe(port, 'bench/support/trivial/hono-app.ts', ['--allow-net']),
      ),
    )
  }
  if (runtimes.includes('workerd')) {
    const module = await trivialWorker(join(ctx.scratch, 'trivial-worker.js'))
    targets.push({
      name: 'workerd: trivial Hono app',
      runtime: 'workerd',
      kind: 'trivial',
      command: workerdServe(ctx, module, [], () => ({})),
    })
  }
  return targets
}

/**
 * Turnline on each runtime asked for, from `tree`: `npm start`, the built server (`built`: this
 * checkout's given builds; an earlier tree is built into its own dist/ first), `deno serve`, and
 * the Worker bundle on bare workerd.
 */
export async function turnlineTargets(
  ctx: TargetContext,
  tree: SourceTree,
  runtimes: string[],
  built: string[],
): Promise<Target[]> {
  const bin = (name: string) => join(ctx.here, 'node_modules/.bin', name)
  const label = tree.label === '' ? '' : ` [${tree.label}]`
  const cwd = tree.root
  const targets: Target[] = []
  if (runtimes.includes('node')) {
    targets.push({
      name: `node: npm start (infra/start.mjs)${label}`,
      runtime: 'node',
      kind: 'turnline',
      command: (port, dir) => ({
        file: process.execPath,
        args: ['infra/start.mjs'],
        env: ctx.env(port, dir),
        cwd,
      }),
    })
  }
  if (runtimes.includes('built')) {
    if (tree.label !== '') {
      execFileSync(process.execPath, ['infra/build/build.mjs', 'node'], { cwd, stdio: 'ignore' })
    }
    const servers = tree.label === '' ? built : [join(cwd, 'dist/node/server.mjs')]
    for (const server of servers) {
      targets.push({
        name: `node: built (${tree.label === '' ? server : 'dist/node/server.mjs'})${label}`,
        runtime: 'node-plain',
        kind: 'turnline',
        command: (port, dir) => ({
          file: process.execPath,
          args: [server],
          env: ctx.env(port, dir),
        }),
      })
    }
  }
  if (runtimes.includes('deno')) {
    const denoTarget = (name: string, module: string, folder: string): Target => ({
      name,
      runtime: 'deno',
      kind: 'turnline',
      command: (port, dir) => ({
        file: bin('deno'),
        args: denoServe(port, module, DENO_ALLOW),
        env: { ...ctx.env(port, dir), TURNLINE_SINGLE_TENANT: '1' },
        cwd: folder,
      }),
    })
    targets.push(
      denoTarget(
        `deno: deno serve functions/entries/deno.ts${label}`,
        'functions/entries/deno.ts',
        cwd,
      ),
    )
    // The Deno build (dist/deno/server.mjs) of the tree, built into the scratch folder and
    // started from there (no node_modules beside it), with the same permissions. An earlier
    // tree may have no Deno build target: then only its sources are started.
    if (hasDenoBuild(cwd)) {
      const out = join(ctx.scratch, `deno-build${tree.label === '' ? '' : `-${tree.label}`}`)
      execFileSync(process.execPath, ['infra/build/build.mjs', 'deno', '--out', out], {
        cwd,
        stdio: 'ignore',
      })
      targets.push(
        denoTarget(
          `deno: deno serve dist/deno/server.mjs (built)${label}`,
          'server.mjs',
          join(out, 'deno'),
        ),
      )
    }
  }
  if (runtimes.includes('workerd')) {
    const outdir = join(ctx.scratch, `worker${tree.label === '' ? '' : `-${tree.label}`}`)
    const bundle = await workerBundle(outdir, true, cwd)
    console.log(`workerd${label}: ${describeWorkerBundle(bundle)}`)
    const vars = (port: number, dir: string) => {
      const { PATH, HOME, PORT, TURNLINE_DATA_DIR, DENO_NO_UPDATE_CHECK, NO_COLOR, ...rest } =
        ctx.env(port, dir)
      return { ...rest, TURNLINE_SINGLE_TENANT: '1' }
    }
    targets.push({
      name: `workerd: Worker bundle (wrangler deploy)${label}`,
      runtime: 'workerd',
      kind: 'turnline',
      command: workerdServe(ctx, bundle.file, bundle.modules, vars),
    })
  }
  return targets
}

/** Whether the tree's build script has the Deno target (`node infra/build/build.mjs deno`). */
function hasDenoBuild(root: string): boolean {
  return /^\s+deno: \{/m.test(readFileSync(join(root, 'infra/build/build.mjs'), 'utf8'))
}

/** Bare `workerd serve` on one module, its fetches allowed to this machine's mock and receiver. */
function workerdServe(
  ctx: TargetContext,
  moduleFile: string,
  modules: WorkerModule[],
  vars: (port: number, dir: string) => Record<string, string>,
): (port: number, dir: string) => Promise<Command> {
  return async (port, dir) => {
    await mkdir(dir, { recursive: true })
    const worker = { moduleFile, modules, compatibility: await compatibility() }
    const config = await workerdConfig({
      ...worker,
      dir,
      port,
      vars: vars(port, dir),
      localOutbound: true,
    })
    return { file: workerdBin, args: ['serve', config], env: ctx.env(port, dir) }
  }
}
