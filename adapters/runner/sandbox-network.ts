import path from 'node:path'

/**
 * The network of a sandboxed command that may use one (docs/runner-protocol.md, "Network").
 * Commands never share the host's network namespace: inside their own, a relay listens on the
 * sandbox's loopback (127.0.0.1:3128) and hands each connection to the runner's egress proxy
 * through a unix socket bind-mounted into the sandbox; HTTP_PROXY and friends point there. A
 * program that ignores proxy variables reaches nothing — the host's loopback, its abstract unix
 * sockets and every other address are outside the namespace.
 */

/** What a command that may use the network gets: the proxy, or nothing and why. */
export type CommandNetwork =
  | { kind: 'proxy'; socket: string; tools: RelayTools }
  | { kind: 'unavailable'; reason: string }

/** Absolute paths of the programs the relay needs inside the sandbox (all under /usr). */
export interface RelayTools {
  socat: string
  setpriv: string
  sleep: string
}

export const RELAY_PORT = 3128
export const PROXY_URL = `http://127.0.0.1:${RELAY_PORT}`
/** Where the command's proxy socket appears inside its sandbox. */
const SOCKET_INSIDE = '/run/turnline/egress.sock'
/** How /proc/net/tcp shows 127.0.0.1:3128 (little-endian address, hex port) … */
const RELAY_LOCAL = `0100007F:${RELAY_PORT.toString(16).toUpperCase().padStart(4, '0')}`
/** … in state LISTEN. */
const LISTEN = '0A'
/**
 * How long the relay keeps carrying one direction of a connection after the other one ended
 * (socat's `-t`; its default is half a second). A client that sends its request and then closes
 * its side (`printf … | socat`, HTTP/1.0 tools) still gets the whole answer, however long the
 * proxy or the far end takes; the sandbox's own time limit bounds it.
 */
const HALF_CLOSED_SECONDS = 3600

/** bubblewrap arguments: the command's proxy socket, bound into the sandbox. */
export function networkMounts(network: false | CommandNetwork): string[] {
  if (network === false || network.kind !== 'proxy') return []
  return ['--dir', path.dirname(SOCKET_INSIDE), '--bind', network.socket, SOCKET_INSIDE]
}

/** The proxy variables of a command with the network (lowercase too: tools read either). */
export function networkEnv(network: false | CommandNetwork): Record<string, string> {
  if (network === false || network.kind !== 'proxy') return {}
  const noProxy = 'localhost,127.0.0.1,::1'
  return {
    HTTP_PROXY: PROXY_URL,
    HTTPS_PROXY: PROXY_URL,
    ALL_PROXY: PROXY_URL,
    NO_PROXY: noProxy,
    http_proxy: PROXY_URL,
    https_proxy: PROXY_URL,
    all_proxy: PROXY_URL,
    no_proxy: noProxy,
  }
}

/**
 * The command line inside the sandbox: a small `sh` starts the relay, waits until it listens,
 * then becomes the command (`exec`, so the command keeps its place in the process tree). The
 * relay holds none of the command's pipes (its stdio is /dev/null) and dies with the command
 * (`setpriv --pdeathsig KILL`: its parent is the command's process), so it neither keeps the
 * sandbox alive nor delays the end of the output.
 */
export function networkArgv(network: false | CommandNetwork, argv: string[]): string[] {
  if (network === false) return argv
  if (network.kind === 'unavailable') {
    const note = `[runner] this command has no network: ${network.reason}`
    return ['sh', '-c', 'printf "%s\\n" "$0" >&2; exec "$@"', note, ...argv]
  }
  const { socat, setpriv, sleep } = network.tools
  const script = [
    `${setpriv} --pdeathsig KILL ${socat} -t ${HALF_CLOSED_SECONDS} ` +
      `TCP-LISTEN:${RELAY_PORT},bind=127.0.0.1,reuseaddr,fork ` +
      `UNIX-CONNECT:${SOCKET_INSIDE} </dev/null >/dev/null 2>&1 &`,
    'relay=$!',
    'listening() {',
    '  while read -r _ local _ state _; do',
    `    [ "$local" = ${RELAY_LOCAL} ] && [ "$state" = ${LISTEN} ] && return 0`,
    '  done < /proc/net/tcp',
    '  return 1',
    '}',
    'tries=0',
    'until listening; do',
    '  tries=$((tries + 1))',
    '  if [ "$tries" -gt 1000 ]; then',
    '    kill "$relay" 2>/dev/null',
    `    echo "[runner] the network relay did not start: this command has no network" >&2`,
    '    break',
    '  fi',
    `  ${sleep} 0.01`,
    'done',
    'exec "$@"',
  ].join('\n')
  return ['sh', '-c', script, 'turnline-relay', ...argv]
}
