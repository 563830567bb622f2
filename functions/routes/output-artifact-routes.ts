import { Hono } from 'hono'
import {
  KeptOutputListSchema,
  KeptOutputsQuerySchema,
} from '../../src/contract/kept-output-list.ts'
import {
  OutputArtifactParamsSchema,
  RangeHeadersSchema,
  SessionIdParamsSchema,
} from '../../src/contract/route-params.ts'
import type { AppEnv, RouteContext } from '../http/app-context.ts'
import { byteRange } from '../http/byte-range.ts'
import { jsonResponse } from '../http/json-response.ts'
import { headerParams, noQuery, pathParams, queryParams } from '../openapi/declared-input.ts'
import { errorAnswers, jsonAnswer, operation } from '../openapi/route-docs.ts'

/** An async iterable of byte chunks as a stream read one chunk at a time. */
function streamOf(chunks: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]()
  return new ReadableStream({
    async pull(controller) {
      const next = await iterator.next()
      if (next.done) controller.close()
      else controller.enqueue(next.value)
    },
    async cancel() {
      await iterator.return?.()
    },
  })
}

const bytesAnswer = (description: string) => ({
  description,
  content: {
    'application/octet-stream': { schema: { type: 'string' as const, format: 'binary' } },
  },
})

/**
 * `GET /v1/sessions/{id}/artifacts`: the tool outputs the session kept whole, each by the call
 * that answered it (a command's `tool_output` event names only its spool, so this is how a
 * reader gets from any output to its artifact), and the hook answers it kept, each by its hook.
 * `GET /v1/sessions/{id}/artifacts/{artifact_id}`: the whole bytes of a tool output or a turn
 * input's text the session kept as an artifact (its preview names the id), streamed from the
 * store; one byte range with `Range`.
 */
export function outputArtifactRoutes(ctx: RouteContext): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.get(
    '/sessions/:id/artifacts',
    operation({
      operationId: 'listKeptOutputs',
      tags: ['sessions'],
      summary: 'List the tool outputs and hook answers a session kept whole',
      description:
        "Every tool output and hook answer the session kept as an artifact (each over the inline limit), with the artifact's id and sizes. An entry of `kind` `tool_output` (a command's output, an HTTP or MCP tool's answer) names the `tool_output` item and call that produced it; one of `kind` `hook_answer` names the hook (`event`, `hook`, `hook_index`, `hook_type`, and for pre/post_tool_use the model's `tool_call_id`) — any hook event's answer, a `pre_tool_use` deny's among them. VT Code's events are unchanged: a command's `tool_output` event names only its `spool_path` and no event names a hook's answer, so this listing is how those artifacts are found. Derived from the session's batches in order; pages of `limit`, pass `cursor` back for the next. A turn input's texts kept as artifacts are listed by `GET …/turns` (`input_artifacts`).",
      responses: {
        200: jsonAnswer('One page of kept outputs.', KeptOutputListSchema),
        ...errorAnswers(400, 401, 404, 500, 503),
      },
    }),
    pathParams(SessionIdParamsSchema),
    queryParams(KeptOutputsQuerySchema),
    async (c) => {
      const { id } = c.req.valid('param')
      const page = await ctx.api.listKeptOutputs(c.get('tenant'), id, c.req.valid('query'))
      return jsonResponse(JSON.stringify(page))
    },
  )
  routes.get(
    '/sessions/:id/artifacts/:artifact_id',
    operation({
      operationId: 'getOutputArtifact',
      tags: ['sessions'],
      summary: 'Read a tool output or input text kept whole',
      description:
        "A tool answer, or a text of a turn's input, over the inline limit (TURNLINE_TOOL_MAX_RESPONSE_BYTES) is kept whole as an immutable, content-addressed artifact of the session; the model and the transcript get a preview naming its id (`out_…`), and `GET …/turns` lists an input's artifacts in `input_artifacts`. This answers its bytes as stored, or one byte range of them (`Range`, 206 with `Content-Range`; 416 past the end).",
      responses: {
        200: bytesAnswer('The whole artifact.'),
        206: bytesAnswer('The requested byte range.'),
        ...errorAnswers(400, 401, 404, 416, 500, 503),
      },
    }),
    pathParams(OutputArtifactParamsSchema),
    headerParams(RangeHeadersSchema),
    noQuery,
    async (c) => {
      const { id, artifact_id } = c.req.valid('param')
      const opened = await ctx.api.getOutputArtifact(c.get('tenant'), id, artifact_id)
      const { size } = opened.artifact
      const headers: Record<string, string> = {
        'content-type': 'application/octet-stream',
        'x-content-type-options': 'nosniff',
        'accept-ranges': 'bytes',
        etag: `"${opened.artifact.id}"`,
        'cache-control': 'private, max-age=31536000, immutable',
      }
      const range = byteRange(c.req.valid('header').Range, size)
      if (range.kind === 'unsatisfiable') {
        const message = `the range is outside the artifact's ${size} bytes`
        return jsonResponse(JSON.stringify({ error: { code: 'invalid_input', message } }), 416, {
          'content-range': `bytes */${size}`,
        })
      }
      const [start, end] = range.kind === 'range' ? [range.start, range.end] : [0, size]
      headers['content-length'] = String(end - start)
      if (range.kind === 'range') headers['content-range'] = `bytes ${start}-${end - 1}/${size}`
      const body = c.req.method === 'HEAD' ? null : streamOf(opened.read(start, end))
      return new Response(body, { status: range.kind === 'range' ? 206 : 200, headers })
    },
  )
  return routes
}
