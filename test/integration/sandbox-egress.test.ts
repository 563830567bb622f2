import { randomBytes } from 'node:crypto'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { hostname, networkInterfaces, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commandTurns } from '../support/command-turns.ts'
import { startTestDns, type TestDns } from '../support/dns-server.ts'
import { startMcpServer, type TestMcpServer } from '../support/mcp-server.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { curlCommand, startHttpTarget, startListener } from '../support/sandbox-commands.ts'
import { requireServices } from '../support/services.ts'
import { startToolReceiver } from '../support/tool-receiver.ts'
import { until } from '../support/until.ts'

/**
 * The egress policy, tried from turns: `npm start` with several tenants, Redis as coordinator,
 * the in-process runner with bubblewrap. A command of a session with `sandbox.network` reaches
 * the public internet only, through the runner's proxy: every address class of the host and its
 * networks is refused, whatever name leads there; an allowlisted host stays reachable.
 */
const KEY = 'acme-api-key-0123456789'
const PUBLIC_LOOKING = 'api.public-looking.example'
const MIRROR = 'mirror.allowed.example'
const TOOL_SECRET = 'egress-tool-secret-0123456789'

let dataDir: string
let mock: MockOpenAI
let dns: TestDns
let allowed: Awaited<ReturnType<typeof startHttpTarget>>
/** On every interface; allowlisted at 127.0.0.2 only, where the test DNS puts `localhost`. */
let checkedOnly: Awaited<ReturnType<typeof startHttpTarget>>
let s3Endpoint: URL
/** Allowlisted; answers 1.5 s after each request. */
let late: Awaited<ReturnType<typeof startHttpTarget>>
let server: NodeEntry
let serverPort: number
let redisPort: number
let turns: ReturnType<typeof commandTurns>
let open: string

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'turnline-egress-'))
  await chmod(dataDir, 0o711)
  mock = await startMockOpenAI()
  allowed = await startHttpTarget('hello from the allowlisted host')
  checkedOnly = await startHttpTarget('hello from the checked address', '0.0.0.0')
  late = await startHttpTarget('hello, late', '127.0.0.1', 1500)
  dns = await startTestDns({
    [PUBLIC_LOOKING]: ['127.0.0.1'],
    [MIRROR]: ['127.0.0.1'],
    // This machine's name, which its /etc/hosts maps to loopback too.
    [hostname()]: ['127.0.0.1'],
    // Where the egress checks look names up, `localhost` is 127.0.0.2; every other lookup on
    // this machine (/etc/hosts) answers 127.0.0.1. A second lookup would show.
    localhost: ['127.0.0.2'],
    // Public addresses the deployment names internal (TURNLINE_EGRESS_DENY), by name.
    'db.named-internal.example': ['1.2.4.4'],
    'alias.public-looking.example': ['1.2.4.4'],
  })
  const { redisUrl, s3 } = requireServices()
  s3Endpoint = new URL(s3.endpoint)
  redisPort = Number(new URL(redisUrl).port)
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dataDir, 'data'),
    TURNLINE_API_KEYS: `${KEY}=acme`,
    OPENAI_API_KEY: 'sk-egress-test',
    OPENAI_BASE_URL: mock.baseURL,
    TURNLINE_MODEL: 'gpt-4o-mini',
    REDIS_URL: redisUrl,
    // The shared test Redis holds other deployments' keys: this one gets its own.
    TURNLINE_REDIS_NAMESPACE: `egress-${randomBytes(6).toString('hex')}`,
    TURNLINE_EGRESS_ALLOW: `${MIRROR}:${allowed.port},127.0.0.1:${allowed.port},127.0.0.2:${checkedOnly.port},127.0.0.1:${late.port}`,
    TURNLINE_EGRESS_DENY: '1.2.3.0/24,.corp.example,db.named-internal.example',
    TURNLINE_EGRESS_DNS: dns.address,
    // Tenants pick their tools' hosts: every address is checked when a call connects.
    TURNLINE_TOOL_ALLOWED_HOSTS: '*',
    TURNLINE_TOOL_SECRET: TOOL_SECRET,
  })
  const url = await server.listening()
  serverPort = Number(new URL(url).port)
  turns = commandTurns(url, mock)
  open = await turns.createSession(KEY, { sandbox: { network: true } })
})

afterAll(async () => {
  await server?.stop()
  await mock?.close()
  await dns?.close()
  await allowed?.close()
  await checkedOnly?.close()
  await late?.close()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

/**
 * curl from a command of the session with the network, through the proxy even for loopback
 * (`--noproxy ''` overrides NO_PROXY, as a tenant could); the refusal names the reason.
 */
async function refused(url: string, reason: RegExp): Promise<string> {
  const output = await turns.runInTurn(KEY, open, curlCommand(url, "--noproxy ''"))
  expect(output).toMatch(/turnline egress: .* refused: /)
  expect(output).toMatch(reason)
  expect(output).toMatch(/status=403/)
  return output
}

/** Several refusals in one command, one curl through the proxy per URL: each is a 403 naming its reason. */
async function refusedInOneCommand(targets: [string, RegExp][]): Promise<void> {
  const output = await turns.runInTurn(
    KEY,
    open,
    targets.map(([url]) => curlCommand(url, "--noproxy ''")).join('; '),
  )
  for (const [, reason] of targets) expect(output).toMatch(reason)
  expect(output.match(/status=403/g)).toHaveLength(targets.length)
}

describe('a command with the network reaches the public internet only', () => {
  it('the server said how commands reach the network, once its runner had probed it', async () => {
    expect(server.output()).toMatch(/bubblewrap .* network only for sessions that allow it, limits/)
    // The egress probe may end after the server listens: its notice comes when it does.
    await until('the egress notice', () =>
      /commands allowed the network reach it through the egress proxy \(the public internet only\)/.test(
        server.output(),
      )
        ? true
        : undefined,
    )
  })

  it("refuses the server's own port on loopback, and gives no way around the proxy", async () => {
    await refused(`http://127.0.0.1:${serverPort}/healthz`, /a loopback address/)
    // Without the proxy there is only the sandbox's own loopback: nothing of the host's.
    const direct = await turns.runInTurn(
      KEY,
      open,
      curlCommand(`http://127.0.0.1:${serverPort}/healthz`, "--noproxy '*'"),
    )
    expect(direct).toMatch(/Failed to connect|Couldn't connect/)
    expect(direct).not.toMatch(/"ok"/)
  })

  it("refuses Redis's port, over HTTP and through CONNECT (TLS)", async () => {
    await refused(`http://127.0.0.1:${redisPort}/`, /a loopback address/)
    const tls = await turns.runInTurn(
      KEY,
      open,
      curlCommand(`https://127.0.0.1:${redisPort}/`, "--noproxy ''"),
    )
    expect(tls).toMatch(/CONNECT tunnel failed, response 403/)
    const raw = await turns.runInTurn(
      KEY,
      open,
      `printf 'PING\\r\\n' | socat -T 5 - TCP:127.0.0.1:${redisPort} 2>&1; echo "exit=$?"`,
    )
    expect(raw).not.toContain('PONG')
  })

  it('refuses the model endpoint and the S3 endpoint the server uses, on loopback', async () => {
    const model = new URL(mock.baseURL)
    await refused(`http://127.0.0.1:${model.port}/v1/models`, /a loopback address/)
    await refused(`http://127.0.0.1:${s3Endpoint.port}/`, /a loopback address/)
    await refused(`http://localhost:${s3Endpoint.port}/`, /a loopback address/)
    const tls = await turns.runInTurn(
      KEY,
      open,
      curlCommand(`https://127.0.0.1:${model.port}/v1/models`, "--noproxy ''"),
    )
    expect(tls).toMatch(/CONNECT tunnel failed, response 403/)
    // Around the proxy there is nothing of the host's: neither answers.
    const direct = await turns.runInTurn(
      KEY,
      open,
      [
        curlCommand(`http://127.0.0.1:${model.port}/v1/models`, "--noproxy '*'"),
        curlCommand(`http://127.0.0.1:${s3Endpoint.port}/`, "--noproxy '*'"),
      ].join('; '),
    )
    expect(direct).toMatch(/Failed to connect|Couldn't connect/)
    expect(direct.match(/status=000/g)).toHaveLength(2)
  })

  it('refuses a private address, and cloud metadata at the link-local 169.254.169.254', async () => {
    await refused('http://10.20.30.40/', /a private network address/)
    await refused('http://172.16.0.1:8080/', /a private network address/)
    await refused('http://100.64.0.1/', /carrier-grade NAT/)
    await refused('http://169.254.169.254/latest/meta-data/', /a link-local address/)
    const tls = await turns.runInTurn(KEY, open, curlCommand('https://169.254.169.254/'))
    expect(tls).toMatch(/CONNECT tunnel failed, response 403/)
  })

  it("refuses the host's own non-loopback interface address", async () => {
    const own = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .find((i) => i.family === 'IPv4' && !i.internal)
    if (!own) throw new Error('this machine has no non-loopback IPv4 interface to test with')
    const listener = await startListener('0.0.0.0')
    try {
      await refused(`http://${own.address}:${listener.port}/`, /one of this host's own addresses/)
      expect(listener.connections()).toBe(0)
    } finally {
      await listener.close()
    }
  })

  it('refuses IPv6 loopback and the IPv4-mapped form of 127.0.0.1', async () => {
    const listener = await startListener('::')
    try {
      await refused(`http://[::1]:${listener.port}/`, /a loopback address/)
      await refused(
        `http://[::ffff:127.0.0.1]:${listener.port}/`,
        /the IPv4-mapped form of 127\.0\.0\.1, a loopback address/,
      )
      await refused(`http://0.0.0.0:${listener.port}/`, /the unspecified address/)
      expect(listener.connections()).toBe(0)
    } finally {
      await listener.close()
    }
  })

  it('refuses IPv6 unique local and link-local addresses, and IPv4 forms of refused ones', async () => {
    const targets: [string, RegExp][] = [
      ['http://[fd00::1]/', /\[?fd00::1\]? is a unique local address/],
      ['http://[fe80::1]/', /\[?fe80::1\]? is a link-local address/],
      ['http://[::ffff:169.254.169.254]/', /IPv4-mapped form of 169\.254\.169\.254, a link-local/],
      ['http://[::ffff:10.0.0.1]/', /IPv4-mapped form of 10\.0\.0\.1, a private network/],
      ['http://[64:ff9b::a9fe:a9fe]/', /NAT64 form of 169\.254\.169\.254/],
    ]
    await refusedInOneCommand(targets)
  })

  it('refuses what the deployment names internal: a network, a name suffix, the addresses of a name', async () => {
    const targets: [string, RegExp][] = [
      ['http://1.2.3.4/', /1\.2\.3\.4 is an address named internal by TURNLINE_EGRESS_DENY/],
      ['http://git.corp.example/', /git\.corp\.example is named internal by TURNLINE_EGRESS_DENY/],
      [
        'http://alias.public-looking.example/',
        /resolves to 1\.2\.4\.4, an address of db\.named-internal\.example/,
      ],
    ]
    await refusedInOneCommand(targets)
  })

  it('answers a client that closed its side after the request, however late the answer', async () => {
    // HTTP/1.0 as `printf | socat` sends it: the request, then EOF; the far end answers 1.5 s on.
    const before = late.requests()
    const output = await turns.runInTurn(
      KEY,
      open,
      `printf 'GET http://127.0.0.1:${late.port}/ HTTP/1.0\\r\\nhost: x\\r\\n\\r\\n' | ` +
        `socat -t 30 - TCP:127.0.0.1:3128 2>&1; echo "exit=$?"`,
    )
    expect(output).toMatch(/^HTTP\/1\.1 200 /m)
    expect(output).toContain('hello, late')
    expect(late.requests()).toBe(before + 1)
  })

  it('connects to the address it checked, never to the name again', async () => {
    // A proxy that looked the name up a second time to connect would get /etc/hosts' 127.0.0.1,
    // which is refused; the checked answer, 127.0.0.2, is the one allowlisted.
    const before = checkedOnly.requests()
    const plain = await turns.runInTurn(
      KEY,
      open,
      curlCommand(`http://localhost:${checkedOnly.port}/`, "--noproxy ''"),
    )
    expect(plain).toMatch(/hello from the checked address\n+status=200/)
    const tunnelled = await turns.runInTurn(
      KEY,
      open,
      curlCommand(`http://localhost:${checkedOnly.port}/`, "--noproxy '' --proxytunnel"),
    )
    expect(tunnelled).toMatch(/hello from the checked address\n+status=200/)
    expect(checkedOnly.requests()).toBe(before + 2)
    expect(checkedOnly.reachedAt().slice(before)).toEqual(['127.0.0.2', '127.0.0.2'])
    // The same port at 127.0.0.1 stays refused.
    await refused(`http://127.0.0.1:${checkedOnly.port}/`, /a loopback address/)
  })

  it('refuses a public-looking name that resolves to loopback', async () => {
    const listener = await startListener()
    try {
      await refused(
        `http://${PUBLIC_LOOKING}:${listener.port}/`,
        new RegExp(`${PUBLIC_LOOKING} resolves to 127\\.0\\.0\\.1, a loopback address`),
      )
      const tls = await turns.runInTurn(
        KEY,
        open,
        curlCommand(`https://${PUBLIC_LOOKING}:${listener.port}/`),
      )
      expect(tls).toMatch(/CONNECT tunnel failed, response 403/)
      expect(dns.queries(PUBLIC_LOOKING)).toBeGreaterThan(0)
      expect(listener.connections()).toBe(0)
    } finally {
      await listener.close()
    }
  })

  it('reaches an allowlisted host, plainly and through a CONNECT tunnel', async () => {
    const before = allowed.requests()
    const plain = await turns.runInTurn(KEY, open, curlCommand(`http://${MIRROR}:${allowed.port}/`))
    expect(plain).toMatch(/hello from the allowlisted host\n+status=200/)
    const tunnelled = await turns.runInTurn(
      KEY,
      open,
      curlCommand(`http://${MIRROR}:${allowed.port}/`, '--proxytunnel'),
    )
    expect(tunnelled).toMatch(/hello from the allowlisted host\n+status=200/)
    // Allowlisted by address and port: any name that resolves there reaches it.
    const byAddress = await turns.runInTurn(
      KEY,
      open,
      curlCommand(`http://${PUBLIC_LOOKING}:${allowed.port}/`),
    )
    expect(byAddress).toMatch(/hello from the allowlisted host\n+status=200/)
    expect(allowed.requests()).toBe(before + 3)
    // The allowlist names a port: the host's other ports stay refused.
    await refused(
      `http://${MIRROR}:${allowed.port + 1}/`,
      /resolves to 127\.0\.0\.1, a loopback address/,
    )
  })

  it("cannot reach the host's abstract unix sockets", async () => {
    const name = `turnline-egress-test-${randomBytes(6).toString('hex')}`
    const listener = await startListener(`\0${name}`)
    try {
      const output = await turns.runInTurn(
        KEY,
        open,
        // Node binds abstract names padded to the whole address: connect with the same length.
        `socat -T 5 - ABSTRACT-CONNECT:${name},unix-tightsocklen=0 </dev/null 2>&1; echo "exit=$?"`,
      )
      expect(output).toMatch(/Connection refused/)
      expect(output).not.toContain('hello from the host')
      expect(listener.connections()).toBe(0)
    } finally {
      await listener.close()
    }
  })
})

describe('a command without the network', () => {
  it('has none: no proxy, not even to an allowlisted host', async () => {
    const closed = await turns.createSession(KEY)
    const before = allowed.requests()
    const output = await turns.runInTurn(
      KEY,
      closed,
      `env | grep -ci proxy; ls /run/turnline 2>&1; ${curlCommand(`http://127.0.0.1:${allowed.port}/`)}`,
    )
    expect(output).toMatch(/^0\n/)
    expect(output).toMatch(/No such file or directory/)
    expect(output).toMatch(/Failed to connect|Couldn't connect/)
    expect(allowed.requests()).toBe(before)
  })
})

describe('calls the server makes where a tenant points it, with TURNLINE_TOOL_ALLOWED_HOSTS=*', () => {
  const tool = (url: string) => ({
    type: 'http',
    name: 'lookup',
    description: 'Look a thing up',
    parameters: { type: 'object', properties: { q: { type: 'string' } } },
    url,
  })
  let toolCalls = 0

  /** A session whose HTTP tool points at `url`, one turn calling it: the tool's output. */
  async function callTool(url: string): Promise<string> {
    toolCalls += 1
    const session = await turns.createSession(KEY, { tools: [tool(url)] })
    mock.enqueue(
      { toolCalls: [{ id: `call_tool_${toolCalls}`, name: 'lookup', arguments: '{"q":"x"}' }] },
      { text: 'done' },
    )
    const turn = await turns.api(KEY, `/v1/sessions/${session}/turns`, { input: 'look it up' })
    const events = turn.events as { type: string; item?: { type: string; output?: string } }[]
    const output = events.find((e) => e.type === 'item.completed' && e.item?.type === 'tool_output')
    return output?.item?.output ?? JSON.stringify(events)
  }

  it('an HTTP tool at a name that resolves to loopback is refused when it connects', async () => {
    const receiver = await startToolReceiver(TOOL_SECRET)
    const port = new URL(receiver.url).port
    try {
      for (const name of [PUBLIC_LOOKING, hostname()]) {
        const output = await callTool(`http://${name}:${port}/tool`)
        expect(output).toContain(
          `${name}:${port} refused: ${name} resolves to 127.0.0.1, a loopback address`,
        )
      }
      for (const literal of ['127.0.0.1', '[::ffff:127.0.0.1]', '[::1]']) {
        const output = await callTool(`http://${literal}:${port}/tool`)
        expect(output).toMatch(/refused: .*a loopback address/)
      }
      expect(await callTool('http://169.254.169.254/latest/meta-data/')).toMatch(
        /refused: 169\.254\.169\.254 is a link-local address/,
      )
      expect(receiver.calls).toHaveLength(0)
    } finally {
      await receiver.close()
    }
  })

  it('an HTTP tool at an allowlisted host is reached', async () => {
    const before = allowed.requests()
    expect(await callTool(`http://${MIRROR}:${allowed.port}/tool`)).toContain(
      'hello from the allowlisted host',
    )
    expect(allowed.requests()).toBe(before + 1)
  })

  it("a session's MCP server at a name that resolves to loopback is refused when it connects", async () => {
    const mcp: TestMcpServer = await startMcpServer()
    try {
      const port = new URL(mcp.url).port
      const session = await turns.createSession(KEY, {
        mcp_servers: [{ name: 'docs', url: `http://${PUBLIC_LOOKING}:${port}/mcp` }],
      })
      mock.enqueue({ text: 'no tools today' })
      const turn = await turns.api(KEY, `/v1/sessions/${session}/turns`, { input: 'hello' })
      expect(JSON.stringify(turn.warnings)).toMatch(
        /MCP server docs: .*refused: .*resolves to 127\.0\.0\.1, a loopback address/,
      )
      expect(mcp.requests).toHaveLength(0)
    } finally {
      await mcp.close()
    }
  })

  it('an HTTP hook at a name that resolves to loopback is refused too', async () => {
    const receiver = await startToolReceiver(TOOL_SECRET)
    const port = new URL(receiver.url).port
    try {
      const session = await turns.createSession(KEY, {
        hooks: [{ event: 'stop', type: 'http', url: `http://${PUBLIC_LOOKING}:${port}/hook` }],
      })
      mock.enqueue({ text: 'nothing to do' })
      const turn = await turns.api(KEY, `/v1/sessions/${session}/turns`, { input: 'hello' })
      expect(JSON.stringify(turn)).toMatch(/refused: .*resolves to 127\.0\.0\.1/)
      expect(receiver.calls).toHaveLength(0)
    } finally {
      await receiver.close()
    }
  })
})
