import type { ProviderCase } from '../provider-case.ts'
import { anthropicCases } from './anthropic.ts'
import { azureCases } from './azure.ts'
import { groqCases, mistralCases, qwenCases, xaiCases } from './chat-families.ts'
import { deepseekCases } from './deepseek.ts'
import { imageInputCases } from './image-input.ts'
import { interleavedOrderCases } from './interleaved-order.ts'
import { moonshotCases } from './moonshot.ts'
import { openaiChatCases } from './openai-chat.ts'
import { openaiResponsesCases } from './openai-responses.ts'
import { promptCachingCases } from './prompt-caching.ts'
import { lmstudioCases, ollamaCases, openrouterCases, vllmCases } from './router-and-local.ts'

/**
 * Every conformance case, by provider family (the families of docs/models.md), prompt caching and
 * image input across them.
 */
export const PROVIDER_CASES: Record<string, ProviderCase[]> = {
  'OpenAI Chat': openaiChatCases,
  'OpenAI Responses': openaiResponsesCases,
  Azure: azureCases,
  Anthropic: anthropicCases,
  DeepSeek: deepseekCases,
  'Moonshot / Kimi': moonshotCases,
  Mistral: mistralCases,
  xAI: xaiCases,
  Qwen: qwenCases,
  Groq: groqCases,
  OpenRouter: openrouterCases,
  Ollama: ollamaCases,
  vLLM: vllmCases,
  'LM Studio': lmstudioCases,
  'Prompt caching (each family)': promptCachingCases,
  'Image input (each family)': imageInputCases,
  'Interleaved reasoning order': interleavedOrderCases,
}
