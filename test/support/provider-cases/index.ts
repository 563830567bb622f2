import type { ProviderCase } from '../provider-case.ts'
import { deepseekCases } from './deepseek.ts'
import { moonshotCases } from './moonshot.ts'

/** Every conformance case, by provider family (the families of docs/models.md). */
export const PROVIDER_CASES: Record<string, ProviderCase[]> = {
  DeepSeek: deepseekCases,
  'Moonshot / Kimi': moonshotCases,
}
