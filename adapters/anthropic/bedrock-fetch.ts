import { SignatureV4 } from '@smithy/signature-v4'
import type { AwsCredentialIdentity, Provider } from '@smithy/types'
import { base64Bytes } from '../../src/shared/base64.ts'
import { WebSha256 } from '../shared/web-sha256.ts'
import { eventStreamMessages } from './aws-event-stream.ts'
import { anthropicErrorBody, anthropicErrorResponse, anthropicErrorType } from './bedrock-errors.ts'
import { platformRequest } from './platform-request.ts'

type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

export interface BedrockOptions {
  /** The AWS region of the Bedrock runtime endpoint (`us-east-1`, …). */
  region: string
  /** Credentials requests are signed with (SigV4, service `bedrock`). */
  credentials?: AwsCredentialIdentity | Provider<AwsCredentialIdentity>
  /** A Bedrock API key, sent as `Authorization: Bearer` instead of a signature. */
  apiKey?: string
  /** Default `https://bedrock-runtime.<region>.amazonaws.com`. */
  baseURL?: string
  fetch?: FetchLike
}

/** The `anthropic_version` Bedrock's Claude models take in the body. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31'

export function bedrockBaseURL(region: string): string {
  return `https://bedrock-runtime.${region}.amazonaws.com`
}

/**
 * A fetch for the Anthropic SDK's client that sends its Messages API requests to Claude on
 * Amazon Bedrock: `POST /model/<model id>/invoke-with-response-stream` (or `/invoke`), the body
 * without `model` and `stream` and with Bedrock's `anthropic_version` (and `anthropic_beta` from
 * the beta header), signed with AWS Signature Version 4 by the AWS SDK's signer — or with a
 * Bedrock API key as a bearer token. The streamed answer, in AWS's event stream encoding, is
 * handed back as the Messages API's Server-Sent Events, and errors in the Messages API's shape,
 * so the adapter reads, classifies and retries Bedrock exactly as Anthropic's API.
 */
export function bedrockFetch(options: BedrockOptions): FetchLike {
  const fetchImpl = options.fetch ?? ((input, init) => fetch(input, init))
  const base = (options.baseURL ?? bedrockBaseURL(options.region)).replace(/\/+$/, '')
  const signer = options.credentials
    ? new SignatureV4({
        service: 'bedrock',
        region: options.region,
        credentials: options.credentials,
        sha256: WebSha256,
      })
    : undefined
  return async (input, init) => {
    const sent = await platformRequest(input, init)
    const { model, stream, ...rest } = sent.body
    const body = JSON.stringify({
      anthropic_version: BEDROCK_ANTHROPIC_VERSION,
      ...rest,
      ...(sent.betas.length > 0 ? { anthropic_beta: sent.betas } : {}),
    })
    const action = stream === true ? 'invoke-with-response-stream' : 'invoke'
    const target = new URL(`${base}/model/${encodeURIComponent(String(model))}/${action}`)
    const headers: Record<string, string> = {
      host: target.host,
      'content-type': 'application/json',
      accept: stream === true ? 'application/vnd.amazon.eventstream' : 'application/json',
    }
    const signed = signer
      ? (
          await signer.sign({
            method: 'POST',
            protocol: target.protocol,
            hostname: target.hostname,
            ...(target.port === '' ? {} : { port: Number(target.port) }),
            path: target.pathname,
            query: {},
            headers,
            body,
          })
        ).headers
      : { ...headers, authorization: `Bearer ${options.apiKey ?? ''}` }
    const { host: _host, ...sendable } = signed
    const response = await fetchImpl(target, {
      method: 'POST',
      headers: sendable,
      body,
      ...(sent.signal ? { signal: sent.signal } : {}),
    })
    if (!response.ok) return anthropicErrorResponse(response)
    if (stream !== true || !response.body) return response
    const requestId = response.headers.get('x-amzn-requestid')
    return new Response(serverSentEvents(response.body), {
      status: 200,
      headers: {
        'content-type': 'text/event-stream',
        ...(requestId === null ? {} : { 'request-id': requestId }),
      },
    })
  }
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** Base64 to UTF-8 text, on Web-standard globals. */
function fromBase64(text: string): string {
  return decoder.decode(base64Bytes(text))
}

/**
 * Bedrock's event stream as the Messages API's SSE: each `chunk` event carries one Messages
 * event, base64-encoded JSON in `bytes`; an `exception` message becomes an `error` event.
 */
function serverSentEvents(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const messages = eventStreamMessages(body)
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const next = await messages.next()
        if (next.done) {
          controller.close()
          return
        }
        const { headers, payload } = next.value
        const text = decoder.decode(payload)
        if (headers[':message-type'] === 'exception' || headers[':message-type'] === 'error') {
          const exception = headers[':exception-type'] ?? headers[':error-code']
          const data = anthropicErrorBody(
            anthropicErrorType(exception),
            bedrockMessageOf(text, exception),
          )
          controller.enqueue(encoder.encode(`event: error\ndata: ${data}\n\n`))
          return
        }
        if (headers[':event-type'] !== 'chunk') continue
        const event = fromBase64((JSON.parse(text) as { bytes: string }).bytes)
        const type = (JSON.parse(event) as { type?: unknown }).type
        controller.enqueue(encoder.encode(`event: ${String(type)}\ndata: ${event}\n\n`))
        return
      }
    },
    async cancel() {
      await messages.return(undefined)
    },
  })
}

function bedrockMessageOf(text: string, exception: string | undefined): string {
  try {
    const message = (JSON.parse(text) as { message?: unknown }).message
    if (typeof message === 'string' && message !== '') return message
  } catch {
    // not JSON: the text itself
  }
  return text.trim() || `Bedrock stream failed (${exception ?? 'unknown exception'})`
}
