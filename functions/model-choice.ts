import { createDemoModelClient, DEMO_MODEL_NAME } from '../adapters/demo-model/demo-model-client.ts'
import {
  createOpenAIModelClient,
  unconfiguredModelClient,
} from '../adapters/openai/openai-model-client.ts'
import {
  type OpenAICompatibleProvider,
  recognizeProvider,
} from '../adapters/openai/provider-profile.ts'
import type { ModelApi, ModelClient } from '../src/ports/model-client.ts'
import { type AnthropicPlatformBackends, chooseAnthropic } from './anthropic-choice.ts'
import type { EnvConfig } from './env-config.ts'
import { routedModelClient, unconfiguredAnthropicClient } from './model-router.ts'
import { isMultiTenantEnv } from './tenancy/tenancy-env.ts'

const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1'

/** Which model answers, as the startup line and the structured start log report it. */
export interface ModelChoice {
  /**
   * The provider of the default API: `openai` (an OpenAI-compatible endpoint), `anthropic`;
   * `demo`: the built-in offline demo model; `none`: every turn fails naming what to set.
   */
  provider: 'openai' | 'anthropic' | 'demo' | 'none'
  /** Model of sessions that name none; absent: sessions must name one. */
  defaultModel?: string
  /** The API of sessions that name none (TURNLINE_MODEL_API, else by what is configured). */
  api: ModelApi
  /** The endpoint of the default API's provider. */
  baseURL?: string
  /** Human-readable startup line. */
  notice: string
}

/**
 * Picks the model client. A real model as soon as an endpoint is set — OPENAI_API_KEY or
 * OPENAI_BASE_URL for the OpenAI-compatible APIs (`chat`, `responses`), ANTHROPIC_API_KEY,
 * ANTHROPIC_AUTH_TOKEN or ANTHROPIC_BASE_URL (or TURNLINE_ANTHROPIC_PLATFORM: Bedrock, Vertex)
 * for the Messages API
 * (`anthropic`); with both, each session's `model.api`
 * picks. Without either, a single-tenant server (npm start, the CLI) runs the offline demo model
 * and says so; a multi-tenant server never falls back to it silently (TURNLINE_MODEL_PROVIDER=demo
 * asks for it explicitly), so its turns fail with `model_not_configured` instead.
 */
export async function chooseModel(
  config: EnvConfig,
  fetchImpl: typeof fetch,
  platforms: AnthropicPlatformBackends = {},
): Promise<{ client: ModelClient; choice: ModelChoice }> {
  const endpoint = config.OPENAI_API_KEY !== undefined || config.OPENAI_BASE_URL !== undefined
  const anthropic = await chooseAnthropic(config, fetchImpl, platforms)
  const api = config.TURNLINE_MODEL_API ?? (anthropic && !endpoint ? 'anthropic' : 'chat')
  const singleTenant = !isMultiTenantEnv(config)
  const configured = endpoint || anthropic !== undefined
  const wanted =
    config.TURNLINE_MODEL_PROVIDER ?? (configured ? 'openai' : singleTenant ? 'demo' : 'openai')

  if (wanted === 'demo') {
    const ignored = [
      ...(endpoint ? ['the OPENAI_* variables'] : []),
      ...(anthropic ? ['the ANTHROPIC_* variables'] : []),
      ...(config.TURNLINE_MODEL !== undefined ? [`TURNLINE_MODEL=${config.TURNLINE_MODEL}`] : []),
    ]
    return {
      client: createDemoModelClient(),
      choice: {
        provider: 'demo',
        defaultModel: DEMO_MODEL_NAME,
        api,
        notice:
          `model: ${DEMO_MODEL_NAME}, the built-in OFFLINE DEMO MODEL (deterministic, no network): ` +
          'it is not a language model; it answers, and runs exec_command and the file tools when ' +
          'a prompt asks ("run `ls`", "read README.md", "write notes.txt: hi"), so the loop can be ' +
          'seen. ' +
          (config.TURNLINE_MODEL_PROVIDER === 'demo'
            ? 'Chosen by TURNLINE_MODEL_PROVIDER=demo'
            : 'Set OPENAI_API_KEY (or OPENAI_BASE_URL) and TURNLINE_MODEL for a real model') +
          (ignored.length > 0 ? ` (ignoring ${ignored.join(' and ')})` : ''),
      },
    }
  }

  const defaults =
    config.TURNLINE_MODEL === undefined ? {} : { defaultModel: config.TURNLINE_MODEL }
  if (!configured) {
    return {
      client: unconfiguredModelClient,
      choice: {
        provider: 'none',
        ...defaults,
        api,
        notice:
          'model: none configured: turns fail until OPENAI_API_KEY (or OPENAI_BASE_URL), or ' +
          'ANTHROPIC_API_KEY, and TURNLINE_MODEL are set' +
          (singleTenant
            ? ''
            : ' (with TURNLINE_API_KEYS the offline demo model is only used when ' +
              'TURNLINE_MODEL_PROVIDER=demo asks for it)'),
      },
    }
  }
  const baseURL = config.OPENAI_BASE_URL ?? OPENAI_DEFAULT_BASE_URL
  const family = wanted === 'openai' ? openAIFamily(config) : wanted
  const openai = endpoint
    ? createOpenAIModelClient({
        ...(config.OPENAI_API_KEY === undefined ? {} : { apiKey: config.OPENAI_API_KEY }),
        ...(config.OPENAI_BASE_URL === undefined ? {} : { baseURL: config.OPENAI_BASE_URL }),
        provider: family,
        fetch: fetchImpl,
      })
    : unconfiguredModelClient
  const model =
    config.TURNLINE_MODEL ?? 'none by default (sessions must name one; set TURNLINE_MODEL)'
  const notices = [
    ...(endpoint
      ? [
          `via ${baseURL} (${family === 'openai' ? '' : `provider ${family}, `}` +
            `${api === 'responses' ? 'Responses' : 'Chat Completions'} API, ` +
            `${config.OPENAI_API_KEY === undefined ? 'no API key' : 'API key set'})`,
        ]
      : []),
    ...(anthropic ? [anthropic.notice] : []),
  ]
  const anthropicDefault = api === 'anthropic' && anthropic !== undefined
  return {
    client: routedModelClient({
      openai,
      anthropic: anthropic?.client ?? unconfiguredAnthropicClient,
    }),
    choice: {
      provider: anthropicDefault || !endpoint ? 'anthropic' : 'openai',
      ...defaults,
      api,
      baseURL: anthropicDefault || !endpoint ? (anthropic?.baseURL ?? baseURL) : baseURL,
      notice: `model: ${model} ${notices.join('; and for api "anthropic" ')}`,
    },
  }
}

/**
 * `openai` (or nothing) lets the endpoint's host say which compatible provider it is; an
 * endpoint no host names (a proxy, a gateway) is OpenAI itself when TURNLINE_MODEL_PROVIDER says
 * `openai`, else `generic`.
 */
function openAIFamily(config: EnvConfig): OpenAICompatibleProvider {
  const recognized = recognizeProvider(config.OPENAI_BASE_URL)
  return recognized === 'generic' && config.TURNLINE_MODEL_PROVIDER === 'openai'
    ? 'openai'
    : recognized
}
