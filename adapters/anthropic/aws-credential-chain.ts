import { defaultProvider } from '@aws-sdk/credential-provider-node'
import type { AwsCredentialIdentity, Provider } from '@smithy/types'

/**
 * The AWS SDK's default credential chain (environment keys, shared config and credentials
 * files with AWS_PROFILE, SSO, web identity, the ECS and EC2 instance roles), for signing Bedrock
 * requests; the SDK caches what it finds and refreshes it before it expires. Node and Lambda
 * only: the entries pass it in, so a Worker bundle never contains it.
 */
export function awsCredentialChain(): Provider<AwsCredentialIdentity> {
  return defaultProvider()
}
