import type { Hono } from 'hono'
import type { AppEnv } from './app-context.ts'

/**
 * The methods this app serves at a path, from its route table: what a 405 lists in `Allow` and
 * a CORS preflight in `Access-Control-Allow-Methods`. A GET route serves HEAD as well, and every
 * known path answers OPTIONS. `undefined` for a path no route has (a 404).
 */
export type RouteMethods = (path: string) => readonly string[] | undefined

interface PathMethods {
  pattern: RegExp
  methods: Set<string>
}

/** Read lazily: routes are mounted after the middleware that asks. */
export function routeMethods(app: Hono<AppEnv>): RouteMethods {
  let table: PathMethods[] | undefined
  return (path) => {
    table ??= tableOf(app)
    const methods = new Set<string>()
    for (const entry of table) {
      if (entry.pattern.test(path)) for (const method of entry.methods) methods.add(method)
    }
    if (methods.size === 0) return undefined
    if (methods.has('GET')) methods.add('HEAD')
    methods.add('OPTIONS')
    return [...methods]
  }
}

function tableOf(app: Hono<AppEnv>): PathMethods[] {
  const byPath = new Map<string, Set<string>>()
  for (const route of app.routes) {
    // Middleware is mounted for ALL methods (and often for `/*`): it serves nothing itself.
    if (route.method === 'ALL' || route.path.includes('*')) continue
    const methods = byPath.get(route.path) ?? new Set<string>()
    methods.add(route.method.toUpperCase())
    byPath.set(route.path, methods)
  }
  return [...byPath].map(([path, methods]) => ({ pattern: patternOf(path), methods }))
}

/** `/v1/sessions/:id/turns` → a RegExp matching one segment per parameter. */
function patternOf(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) =>
      segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/')
  return new RegExp(`^${source}$`)
}
