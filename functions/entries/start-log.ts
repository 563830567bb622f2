import type { Deps } from '../deps.ts'
import { isSingleTenant } from '../http/auth.ts'

/**
 * The structured start line (TURNLINE_LOG=json): where the server listens, which model answers
 * and through which endpoint — `{ts, level, msg: "start", url?, model_provider, model, base_url,
 * model_api, tenancy}`.
 */
export function logStart(deps: Deps, url?: string): void {
  const log = deps.http.requestLog
  if (!log) return
  const { model } = deps
  log({
    ts: new Date().toISOString(),
    level: 'info',
    msg: 'start',
    ...(url === undefined ? {} : { url }),
    model_provider: model.provider,
    model: model.defaultModel ?? null,
    base_url: model.baseURL ?? null,
    model_api: model.api,
    tenancy: isSingleTenant(deps.auth) ? 'single' : 'multi',
  })
}
