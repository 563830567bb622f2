import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import type { DepsOptions } from '../deps.ts'
import { nodePeer } from '../http/client-address.ts'
import { nodeProcessBackends } from './node-process-backends.ts'

/**
 * The backends of the Node entries (`npm start`, the CLI, check.mjs, retention.mjs, keys.mjs): those of
 * every Node process (node-process-backends.ts), the filesystem store under TURNLINE_DATA_DIR as
 * the default, and the socket's peer as the client address.
 */
export const nodeBackends: typeof nodeProcessBackends &
  Pick<DepsOptions, 'defaultStore' | 'peerAddress'> = {
  ...nodeProcessBackends,
  defaultStore: (root) => new FsObjectStore({ root }),
  peerAddress: nodePeer,
}
