import type { ProviderCase } from '../provider-case.ts'
import { anthropicCases } from './anthropic.ts'
import { deepseekCases } from './deepseek.ts'
import { moonshotCases } from './moonshot.ts'

/** Every conformance case, by provider family (the families of docs/models.md). */
export const PROVIDER_CASES: Record<string, ProviderCase[]> = {
  Anthropic: anthropicCases,
  DeepSeek: deepseekCases,
  'Moonshot / Kimi': moonshotCases,
}
