import type { ProviderCase } from '../provider-case.ts'
import { azureCases } from './azure.ts'
import { deepseekCases } from './deepseek.ts'
import { moonshotCases } from './moonshot.ts'
import { openaiChatCases } from './openai-chat.ts'
import { openaiResponsesCases } from './openai-responses.ts'

/** Every conformance case, by provider family (the families of docs/models.md). */
export const PROVIDER_CASES: Record<string, ProviderCase[]> = {
  'OpenAI Chat': openaiChatCases,
  'OpenAI Responses': openaiResponsesCases,
  Azure: azureCases,
  DeepSeek: deepseekCases,
  'Moonshot / Kimi': moonshotCases,
}
