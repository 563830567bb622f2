import { AsyncLocalStorage } from 'node:async_hooks'
import { readFile } from 'node:fs/promises'
import { awsCredentialChain } from '../../adapters/anthropic/aws-credential-chain.ts'
import { checkedFetch } from '../../adapters/egress/checked-fetch.ts'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { nodeFetch } from '../../adapters/node-http/node-fetch.ts'
import { nodeEgressPolicy } from '../../adapters/runner/egress-host.ts'
import { nodeSigV4Hashes } from '../../adapters/s3/node-sigv4-hashes.ts'
import { nodeGzip } from '../../adapters/zlib/node-gzip.ts'
import type { EgressRules } from '../../src/contract/egress-rules.ts'
import type { DepsOptions } from '../deps.ts'
import { nodePeer } from '../http/client-address.ts'
import { redisTcpBackends } from './redis-tcp-backends.ts'
import { referenceScriptOption } from './reference-script-file.ts'

/**
 * The backends only a Node process has, for the Node entries (`npm start`, the CLI, check.mjs,
 * retention.mjs): the filesystem store under TURNLINE_DATA_DIR as the default, the plain-Redis
 * coordinator, per-tenant limiter and failed-authentication counters over TCP for REDIS_URL,
 * the socket's peer as the client address, the fetch that checks the addresses of
 * tenant-directed calls when they connect, AsyncLocalStorage for the current span, and for
 * Claude on Bedrock or Vertex the AWS credential chain and the Google credentials file,
 * node:zlib's gzip for the batches, and fetch as HTTP/1.1 on Node's sockets for the calls to hosts the operator
 * names (the model, the runner, named tool and hook hosts, callbacks, telemetry): a fraction of
 * the global fetch's CPU per request. Tenant-directed calls to hosts only `*` allows still go
 * through the checked fetch. The Upstash adapters send on it too; the S3 client signs with
 * node:crypto's hashes on the calling thread.
 */
export const nodeBackends: Pick<
  DepsOptions,
  | 'defaultStore'
  | 'redisTcp'
  | 'peerAddress'
  | 'checkedFetch'
  | 'referenceScript'
  | 'contextStorage'
  | 'awsCredentials'
  | 'readTextFile'
  | 'gzip'
  | 'fetch'
  | 'sigv4Hashes'
> = {
  defaultStore: (root) => new FsObjectStore({ root }),
  redisTcp: redisTcpBackends,
  peerAddress: nodePeer,
  checkedFetch: nodeCheckedFetch,
  contextStorage: () => new AsyncLocalStorage(),
  awsCredentials: awsCredentialChain,
  readTextFile: (path) => readFile(path, 'utf8'),
  gzip: nodeGzip,
  fetch: nodeFetch(),
  sigv4Hashes: nodeSigV4Hashes,
  ...referenceScriptOption(),
}

/** Tenant-directed calls to hosts only `*` allows: every address checked when it connects. */
function nodeCheckedFetch(rules: EgressRules): typeof fetch {
  return checkedFetch(nodeEgressPolicy(rules))
}
