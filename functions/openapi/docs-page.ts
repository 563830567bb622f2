/** `GET /docs`: a small self-contained page listing the routes (no external assets). */

const ROUTES: [method: string, path: string, text: string][] = [
  [
    'POST',
    '/v1/sessions',
    'Create a session (body: session config) → 201 {session_id, thread_id, status}',
  ],
  ['GET', '/v1/sessions', 'List sessions: ?workspace&status&cursor&limit'],
  ['GET', '/v1/sessions/{id}', 'One session: status, counters, usage, config'],
  [
    'POST',
    '/v1/sessions/{id}/turns',
    'Step one turn: {input?}, header Idempotency-Key; JSON, or SSE with Accept: text/event-stream',
  ],
  [
    'GET',
    '/v1/sessions/{id}/events',
    'Events: ?after&limit&follow=1; NDJSON {seq, schema_version, event}, or SSE (Last-Event-ID resumes)',
  ],
  ['POST', '/v1/sessions/{id}/complete', 'End the session with success'],
  ['POST', '/v1/sessions/{id}/cancel', 'End the session as cancelled'],
  [
    'POST',
    '/v1/sessions/{id}/compact',
    'Compact the transcript now: {instructions?}, header Idempotency-Key → the compact boundary',
  ],
  ['POST', '/v1/sessions/{id}/intents', 'Queue a steering follow-up {text} → 202 {id, pending}'],
  [
    'POST',
    '/v1/sessions/{id}/permissions',
    'Answer a tool call waiting for approval: {tool_name, decision, message?}',
  ],
  [
    'POST',
    '/v1/sessions/{id}/plan-approval',
    'Answer a waiting plan: {decision, feedback?}; execute / fresh_context run the build turn',
  ],
  ['POST', '/v1/sessions/{id}/fork', 'Fork with the summarized history → 201 {session_id, …}'],
  ['GET', '/v1/workspaces/{workspace}/artifacts', "The workspace's durable artifacts (.vtcode/)"],
  [
    'GET PUT POST DELETE',
    '/v1/workspaces/{workspace}/artifacts/{kind}',
    'Read, replace (documents, handoff; the ledger field by field), append (notes, decisions), delete',
  ],
  [
    'GET',
    '/v1/sessions/{id}/orientation',
    'The frozen [Orientation Context]; ?preview=1 builds the current one',
  ],
  [
    'POST',
    '/v1/sessions/{id}/handoff',
    "HandoffRequest from the session → the workspace's current handoff; start the next session, end this one",
  ],
  [
    'POST',
    '/v1/sessions/{id}/verify',
    "A read-only verifier sub-agent judges a turn's change: {turn_id?, paths?, description?} → verdict",
  ],
  ['POST', '/v1/loops', 'Create a loop run: {task, session?, budget?} → 201 the loop'],
  [
    'GET',
    '/v1/loops/{id}',
    'A loop: step index, cumulative tokens and cost, status, budget report',
  ],
  [
    'POST',
    '/v1/loops/{id}/step',
    'Run or resume the next step: {input?}; or {control: pause|resume|complete|fail, budget?}',
  ],
  ['POST', '/v1/runner/callback', "The sandbox runner's signed exit notice (no bearer key)"],
  [
    'POST',
    '/v1/webhooks/{name}',
    'A Standard Webhooks delivery starts an automation run (once per webhook-id)',
  ],
  [
    'POST',
    '/v1/exec',
    'Exec mode: session config + prompt → bare ThreadEvent NDJSON to thread.completed',
  ],
  [
    'POST',
    '/v1/responses',
    'Open Responses: {model?, input, instructions?, stream?, temperature?, top_p?, max_output_tokens?, max_tool_calls?, metadata?} → response resource or SSE to [DONE]',
  ],
  [
    'GET',
    '/v1/responses/{id}',
    'A response rebuilt from its session; ?stream=true&starting_after=N resumes its stream',
  ],
  [
    'GET',
    '/v1/usage',
    "The tenant's usage today (requests, running turns, tokens, cost) and its limits",
  ],
  ['GET', '/v1/openapi.json', 'OpenAPI 3.1 document'],
  ['GET', '/docs', 'This page'],
  ['GET', '/ui', 'Session timeline viewer (HTML): the sessions and their events, live'],
  ['GET', '/healthz', 'Liveness'],
]

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

export function docsPage(version: string): string {
  const rows = ROUTES.map(
    ([method, path, text]) =>
      `<tr><td class="m">${method}</td><td><code>${escapeHtml(path)}</code></td><td>${escapeHtml(text)}</td></tr>`,
  ).join('\n')
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Turnline API</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}td{border-top:1px solid #ddd;padding:.4rem .6rem;vertical-align:top}
td.m{font-weight:600;font-family:monospace}code{font-size:14px}
</style>
</head>
<body>
<h1>Turnline API <small>${escapeHtml(version)}</small></h1>
<p>The VT Code agent-loop contract (event schema 0.11.0) over HTTP, one turn per call.
Authenticate with <code>Authorization: Bearer &lt;key&gt;</code> (not needed in single-tenant mode).
Errors are <code>{"error":{"code","message","details?"}}</code>.
The full contract is the <a href="/v1/openapi.json">OpenAPI document</a>;
the <a href="/ui">session viewer</a> shows sessions and their events live.</p>
<table>
${rows}
</table>
</body>
</html>
`
}
