import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import {
  type UpstashHttpAnswer,
  type UpstashHttpRequest,
  type UpstashTransport,
  upstashHeaders,
} from './upstash-transport.ts'

/**
 * The Upstash transport of the Node entries: node:http(s) with kept-alive connections. On Node
 * `fetch` (undici) costs 2–3× node:http's CPU per request, and an ordinary turn makes two of
 * them (docs/performance.md). The agents are made on first use, one per transport.
 */
export function nodeUpstashTransport(): UpstashTransport {
  const agents = new Map<'http' | 'https', HttpAgent>()
  return (request) => {
    const scheme = request.url.startsWith('https:') ? 'https' : 'http'
    let agent = agents.get(scheme)
    if (!agent) {
      agent =
        scheme === 'https'
          ? new HttpsAgent({ keepAlive: true })
          : new HttpAgent({ keepAlive: true })
      agents.set(scheme, agent)
    }
    return post(scheme === 'https' ? httpsRequest : httpRequest, agent, request)
  }
}

function post(
  send: typeof httpRequest,
  agent: HttpAgent,
  request: UpstashHttpRequest,
): Promise<UpstashHttpAnswer> {
  return new Promise((resolve, reject) => {
    const body = Buffer.from(request.body, 'utf8')
    const outgoing = send(
      request.url,
      {
        method: 'POST',
        agent,
        signal: request.signal,
        headers: { ...upstashHeaders(request), 'content-length': String(body.length) },
      },
      (answer) => read(answer).then(resolve, reject),
    )
    outgoing.on('error', reject)
    outgoing.end(body)
  })
}

async function read(answer: IncomingMessage): Promise<UpstashHttpAnswer> {
  const chunks: Buffer[] = []
  for await (const chunk of answer) chunks.push(chunk as Buffer)
  const syncToken = answer.headers['upstash-sync-token']
  return {
    status: answer.statusCode ?? 0,
    body: Buffer.concat(chunks).toString('utf8'),
    ...(typeof syncToken === 'string' ? { syncToken } : {}),
  }
}
