import { AsyncLocalStorage } from 'node:async_hooks'
import { readFile } from 'node:fs/promises'
import { awsCredentialChain } from '../../adapters/anthropic/aws-credential-chain.ts'
import { checkedFetch } from '../../adapters/egress/checked-fetch.ts'
import { nodeFetch } from '../../adapters/node-http/node-fetch.ts'
import { nodeEgressPolicy } from '../../adapters/runner/egress-host.ts'
import { nodeSigV4Hashes } from '../../adapters/s3/node-sigv4-hashes.ts'
import { nodeGzip } from '../../adapters/zlib/node-gzip.ts'
import type { EgressRules } from '../../src/contract/egress-rules.ts'
import type { DepsOptions } from '../deps.ts'
import { redisTcpBackends } from './redis-tcp-backends.ts'
import { referenceScriptOption } from './reference-script-file.ts'

/**
 * The backends every Node process has, a server (node-backends.ts) or a Lambda function
 * (lambda-handlers.ts) alike: the plain-Redis coordinator, per-tenant limiter and
 * failed-authentication counters over TCP for REDIS_URL, the fetch that checks the addresses of
 * tenant-directed calls when they connect (a function in a VPC reaches private networks too),
 * AsyncLocalStorage for the current span, and for Claude on Bedrock or Vertex the AWS credential
 * chain (the function's role on Lambda) and the Google credentials file, node:zlib's gzip for the
 * batches, and fetch as HTTP/1.1 on Node's sockets, kept alive, for the calls to hosts the
 * operator names (S3, Upstash, the model, the runner, named tool and hook hosts, callbacks,
 * telemetry): a fraction of the global fetch's CPU per request. Tenant-directed calls to hosts
 * only `*` allows still go through the checked fetch. The S3 client signs with node:crypto's
 * hashes on the calling thread; /docs renders offline with the bundle beside the build
 * (reference-script-file.ts).
 */
export const nodeProcessBackends: Pick<
  DepsOptions,
  | 'redisTcp'
  | 'checkedFetch'
  | 'referenceScript'
  | 'contextStorage'
  | 'awsCredentials'
  | 'readTextFile'
  | 'gzip'
  | 'fetch'
  | 'sigv4Hashes'
> = {
  redisTcp: redisTcpBackends,
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
