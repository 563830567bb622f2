import { createSocket } from 'node:dgram'
import { isIPv4, isIPv6 } from 'node:net'

/**
 * A real DNS server over UDP on 127.0.0.1 that answers A and AAAA queries from a table, so a
 * test can give a public-looking name any address (TURNLINE_EGRESS_DNS points the egress checks
 * at it). Unknown names get NXDOMAIN. It counts the queries it answered, by name.
 */
export interface TestDns {
  /** `127.0.0.1:<port>`, as TURNLINE_EGRESS_DNS takes it. */
  address: string
  queries(name: string): number
  close(): Promise<void>
}

const TYPE_A = 1
const TYPE_AAAA = 28

function ipBytes(address: string): Buffer {
  if (isIPv4(address)) return Buffer.from(address.split('.').map(Number))
  if (!isIPv6(address)) throw new Error(`not an address: ${address}`)
  const [head = '', tail = ''] = address.split('::')
  const groups = (text: string) => (text ? text.split(':') : [])
  const left = groups(head)
  const right = address.includes('::') ? groups(tail) : []
  const all = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
  return Buffer.from(
    all.flatMap((g) => [Number.parseInt(g, 16) >> 8, Number.parseInt(g, 16) & 255]),
  )
}

/** The question's name (lowercase) and where the question ends. */
function question(packet: Buffer): { name: string; type: number; end: number } | undefined {
  const labels: string[] = []
  let at = 12
  for (;;) {
    const length = packet[at]
    if (length === undefined || length > 63) return undefined
    at += 1
    if (length === 0) break
    labels.push(packet.subarray(at, at + length).toString('ascii'))
    at += length
  }
  if (at + 4 > packet.length) return undefined
  return { name: labels.join('.').toLowerCase(), type: packet.readUInt16BE(at), end: at + 4 }
}

export async function startTestDns(records: Record<string, string[]>): Promise<TestDns> {
  const table = new Map(Object.entries(records).map(([name, list]) => [name.toLowerCase(), list]))
  const counts = new Map<string, number>()
  const socket = createSocket('udp4')
  socket.on('message', (packet, peer) => {
    const q = question(packet)
    if (!q || packet.length < 12) return
    counts.set(q.name, (counts.get(q.name) ?? 0) + 1)
    const known = table.get(q.name)
    const wanted = (known ?? []).filter((a) =>
      q.type === TYPE_A ? isIPv4(a) : q.type === TYPE_AAAA ? isIPv6(a) : false,
    )
    const header = Buffer.alloc(12)
    header.writeUInt16BE(packet.readUInt16BE(0), 0)
    // QR, the query's RD bit, RA; rcode 3 (NXDOMAIN) for a name not in the table.
    header.writeUInt16BE(0x8080 | (packet.readUInt16BE(2) & 0x0100) | (known ? 0 : 3), 2)
    header.writeUInt16BE(1, 4)
    header.writeUInt16BE(wanted.length, 6)
    const answers = wanted.map((address) => {
      const data = ipBytes(address)
      const record = Buffer.alloc(12)
      record.writeUInt16BE(0xc00c, 0)
      record.writeUInt16BE(q.type, 2)
      record.writeUInt16BE(1, 4)
      record.writeUInt32BE(1, 6)
      record.writeUInt16BE(data.length, 10)
      return Buffer.concat([record, data])
    })
    socket.send(
      Buffer.concat([header, packet.subarray(12, q.end), ...answers]),
      peer.port,
      peer.address,
    )
  })
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()))
  return {
    address: `127.0.0.1:${socket.address().port}`,
    queries: (name) => counts.get(name.toLowerCase()) ?? 0,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  }
}
