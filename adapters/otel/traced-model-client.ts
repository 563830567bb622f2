import { isTurnlineError } from '../../src/contract/errors.ts'
import type {
  ModelClient,
  ModelCompactionRequest,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
} from '../../src/ports/model-client.ts'
import type { OpenSpan, Telemetry, TelemetryAttributes } from '../../src/ports/telemetry.ts'

/** Who answers a request: `gen_ai.provider.name` and the endpoint's `server.*`. */
export interface ModelEndpoint {
  provider: string
  baseURL?: string | undefined
}

/**
 * The model client with the GenAI semantic conventions: a client span `chat <model>` per model
 * request (`gen_ai.*` request and response attributes, usage with cached and reasoning tokens,
 * finish reasons, the server), and the `gen_ai.client.token.usage` and
 * `gen_ai.client.operation.duration` metrics. Prompt and completion content only with
 * `captureContent`.
 */
export function tracedModelClient(
  client: ModelClient,
  telemetry: Telemetry,
  endpointOf: (api: ModelRequest['api']) => ModelEndpoint,
): ModelClient {
  const traced: ModelClient = {
    stream: (request) => tracedStream(client, telemetry, request, endpointOf(request.api)),
  }
  const compact = client.compact?.bind(client)
  if (compact) {
    traced.compact = (request: ModelCompactionRequest) =>
      telemetry.span(
        `compact ${request.model}`,
        { kind: 'client', attributes: { 'gen_ai.request.model': request.model } },
        () => compact(request),
      )
  }
  return traced
}

async function* tracedStream(
  client: ModelClient,
  telemetry: Telemetry,
  request: ModelRequest,
  endpoint: ModelEndpoint,
): AsyncGenerator<ModelStreamEvent> {
  const base = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': endpoint.provider,
    'gen_ai.request.model': request.model,
  }
  const span = telemetry.start(`chat ${request.model}`, {
    kind: 'client',
    attributes: { ...base, ...requestAttributes(request, endpoint, telemetry.captureContent) },
  })
  const started = Date.now()
  let response: ModelResponse | undefined
  let errorType: string | undefined
  try {
    for await (const event of client.stream(request)) {
      if (event.type === 'completed') response = event.response
      yield event
    }
  } catch (error) {
    errorType = isTurnlineError(error) ? error.code : error instanceof Error ? error.name : 'Error'
    span.fail(errorType, failureText(error))
    throw error
  } finally {
    finish(telemetry, span, { ...base, ...serverOf(endpoint) }, response, errorType, started)
  }
}

/**
 * The span's status message: a model error's redacted provider text (an `auth` failure's message
 * leaves it out; the operator's telemetry keeps it), else the error's message.
 */
function failureText(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined
  const said = isTurnlineError(error) ? error.logDetails?.provider_message : undefined
  return typeof said === 'string' ? `${error.message} — provider: ${said}` : error.message
}

function finish(
  telemetry: Telemetry,
  span: OpenSpan,
  base: TelemetryAttributes,
  response: ModelResponse | undefined,
  errorType: string | undefined,
  started: number,
): void {
  const metricBase = {
    ...base,
    ...(response?.responseModel ? { 'gen_ai.response.model': response.responseModel } : {}),
  }
  if (response) {
    span.set(responseAttributes(response, telemetry.captureContent))
    const { usage } = response
    telemetry.record('gen_ai.client.token.usage', usage.input_tokens, {
      ...metricBase,
      'gen_ai.token.type': 'input',
    })
    telemetry.record('gen_ai.client.token.usage', usage.output_tokens, {
      ...metricBase,
      'gen_ai.token.type': 'output',
    })
  }
  telemetry.record('gen_ai.client.operation.duration', (Date.now() - started) / 1000, {
    ...metricBase,
    ...(errorType ? { 'error.type': errorType } : {}),
  })
  span.end()
}

function serverOf(endpoint: ModelEndpoint): TelemetryAttributes {
  if (!endpoint.baseURL) return {}
  try {
    const url = new URL(endpoint.baseURL)
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port)
    return { 'server.address': url.hostname, 'server.port': port }
  } catch {
    return {}
  }
}

function requestAttributes(
  request: ModelRequest,
  endpoint: ModelEndpoint,
  content: boolean,
): TelemetryAttributes {
  return {
    ...serverOf(endpoint),
    'gen_ai.request.max_tokens': request.maxOutputTokens,
    'gen_ai.request.temperature': request.temperature,
    'gen_ai.request.top_p': request.topP,
    'gen_ai.output.type': request.outputSchema ? 'json' : 'text',
    'turnline.model.api': request.api,
    'turnline.model.tools': request.tools.length,
    ...(content ? { 'gen_ai.input.messages': JSON.stringify(request.messages) } : {}),
  }
}

function responseAttributes(response: ModelResponse, content: boolean): TelemetryAttributes {
  const { usage } = response
  return {
    'gen_ai.response.model': response.responseModel,
    'gen_ai.response.id': response.responseId,
    'gen_ai.response.finish_reasons': response.stopReason ? [response.stopReason] : undefined,
    'gen_ai.usage.input_tokens': usage.input_tokens,
    'gen_ai.usage.output_tokens': usage.output_tokens,
    'gen_ai.usage.cache_read.input_tokens': usage.cached_input_tokens,
    'gen_ai.usage.cache_creation.input_tokens': usage.cache_creation_tokens,
    'gen_ai.usage.reasoning.output_tokens': response.reasoningTokens,
    ...(content
      ? {
          'gen_ai.output.messages': JSON.stringify([
            {
              role: 'assistant',
              text: response.text,
              tool_calls: response.toolCalls,
              finish_reason: response.stopReason,
            },
          ]),
        }
      : {}),
  }
}
