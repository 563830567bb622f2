import type { ReferenceScript } from '../openapi/docs-page.ts'

/** The part of Workers' static assets binding (wrangler.toml `[assets] binding`) used here. */
interface AssetsBinding {
  fetch(request: Request): Promise<Response>
}

/** Where infra/build/worker-build.mjs puts the renderer in the Worker's assets. */
const SCRIPT_PATH = '/docs/scalar.js'

/**
 * The Worker's `referenceScript` option: the API reference renderer from its static assets
 * (`ASSETS`), so /docs renders offline as on the other runtimes. The asset layer serves
 * /docs/scalar.js itself before the Worker runs; this read is for a request that reaches the
 * Worker anyway. Without the binding the page loads the renderer from the pinned CDN.
 */
export function workerReferenceScript(bindings: unknown): { referenceScript?: ReferenceScript } {
  const assets = (bindings as { ASSETS?: unknown } | undefined)?.ASSETS
  if (!isAssets(assets)) return {}
  return {
    referenceScript: async () => {
      const answer = await assets.fetch(new Request(`https://assets.invalid${SCRIPT_PATH}`))
      if (!answer.ok || !answer.body) {
        throw new Error(`the Worker's assets have no ${SCRIPT_PATH} (${answer.status})`)
      }
      return answer.body
    },
  }
}

function isAssets(value: unknown): value is AssetsBinding {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { fetch?: unknown }).fetch === 'function'
  )
}
