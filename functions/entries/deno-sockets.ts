import { attachStandardSocket, type SocketAcceptor } from './standard-sockets.ts'

/** The part of the Deno namespace the upgrade uses (tsc here has no Deno types). */
declare const Deno: {
  upgradeWebSocket(request: Request): { socket: WebSocket; response: Response }
}

/** WebSocket upgrades on Deno: `Deno.upgradeWebSocket`, its 101 answer returned to `deno serve`. */
export const denoSocketAcceptor: SocketAcceptor = (request, open) => {
  const { socket, response } = Deno.upgradeWebSocket(request)
  attachStandardSocket(socket, open)
  return response
}
