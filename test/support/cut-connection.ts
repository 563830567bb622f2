import type { Socket } from 'node:net'

/**
 * Drops a streamed answer's connection the way a provider's stream breaks off, once the frames
 * already sent have left: the server adapter writes the frame it last read in a microtask and
 * Node corks a response's writes until the next tick, so one turn of the event loop puts them on
 * the socket; `end()` then flushes the socket and reports when it has (`finish`), and the socket
 * is destroyed only then. No fixed wait: nothing written before the cut can be lost to it.
 */
export async function cutConnection(socket: Socket): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve))
  if (!socket.destroyed) {
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve())
      socket.end(() => resolve())
    })
  }
  socket.destroy()
}
