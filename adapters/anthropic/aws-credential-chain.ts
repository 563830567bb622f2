import type { AwsCredentialIdentity, Provider } from '@smithy/types'
import { commonJsExports } from '../shared/commonjs-exports.ts'

/**
 * The AWS SDK's default credential chain (environment keys, shared config and credentials
 * files with AWS_PROFILE, SSO, web identity, the ECS and EC2 instance roles), for signing Bedrock
 * requests; the SDK caches what it finds and refreshes it before it expires. Node and Lambda
 * only: the entries pass it in, so a Worker bundle never contains it. The SDK is imported when
 * credentials are first asked for, not at start (docs/performance.md, Cold start): a deployment
 * that does not use Bedrock never loads it.
 */
export function awsCredentialChain(): Provider<AwsCredentialIdentity> {
  let chain: Promise<Provider<AwsCredentialIdentity>> | undefined
  return async () => {
    chain ??= import('@aws-sdk/credential-provider-node').then((sdk) =>
      commonJsExports(sdk).defaultProvider(),
    )
    return (await chain)()
  }
}
