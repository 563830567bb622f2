import type { AwsCredentialIdentity, Provider } from '@smithy/types'

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
    chain ??= import('@aws-sdk/credential-provider-node').then((sdk) => {
      // The Lambda bundle puts this CommonJS package in a chunk of its own whose only export is
      // `default` (its module.exports); Node's own loader also gives that `default`.
      const { defaultProvider } = (sdk as unknown as { default?: typeof sdk }).default ?? sdk
      return defaultProvider()
    })
    return (await chain)()
  }
}
