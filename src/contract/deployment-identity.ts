import * as z from 'zod'
import { toHex } from '../shared/sha256-hex.ts'
import { lazySchema } from './lazy-schema.ts'
import {
  readDocument,
  requireFormat,
  requireVersion,
  validateDocument,
  validateForWrite,
} from './stored-document.ts'

/**
 * Which deployment a store and a Redis namespace belong to (docs/deploy/several-instances.md).
 *
 * - `.turnline/deployment.json` in the object store (under `S3_PREFIX`; in the data dir for the
 *   fs store): a random id made by the deployment's first start, create-only, never changed. Every
 *   instance on the same bucket and prefix reads the same id; another prefix, bucket or data dir
 *   is another deployment with another id.
 * - `<namespace>deployment` in Redis: the claim of a Redis namespace by one deployment, set by its
 *   first start when nobody holds it. A start that finds another deployment's claim refuses.
 */
export const DEPLOYMENT_ID_FORMAT = 'turnline.deployment'

/** A deployment id: `dep_` and 128 random bits in lowercase hex. */
export const DEPLOYMENT_ID = /^dep_[0-9a-f]{32}$/

export const DeploymentIdSchema = lazySchema(() =>
  z.strictObject({
    format: z.literal(DEPLOYMENT_ID_FORMAT),
    version: z.literal(1),
    id: z.string().regex(DEPLOYMENT_ID),
    created_at: z.iso.datetime(),
  }),
)
export type DeploymentId = z.infer<typeof DeploymentIdSchema>

/** The value of `<namespace>deployment` in Redis (format version 1). */
export const NamespaceClaimSchema = lazySchema(() =>
  z.strictObject({
    v: z.literal(1),
    deployment: z.string().regex(DEPLOYMENT_ID),
    /** Where that deployment keeps its sessions, for the operator (`s3://bucket/prefix`, …). */
    store: z.string().max(500),
    claimed_at: z.iso.datetime(),
  }),
)
export type NamespaceClaim = z.infer<typeof NamespaceClaimSchema>

/**
 * `TURNLINE_REDIS_NAMESPACE`: a deployment's own part of every Redis key. Letters, digits,
 * `.`, `_` and `-`, so a key never holds a `:` of the name's own.
 */
export const REDIS_NAMESPACE = /^[A-Za-z0-9._-]{1,64}$/

const WHAT = 'deployment id'

/** Reads `.turnline/deployment.json`: unreadable is corrupt_data, another version unsupported. */
export function parseDeploymentId(bytes: Uint8Array): DeploymentId {
  const doc = readDocument(bytes, WHAT)
  requireFormat(doc, 'format', DEPLOYMENT_ID_FORMAT, WHAT)
  requireVersion(doc, 'version', [1], WHAT)
  return validateDocument(DeploymentIdSchema, doc, WHAT)
}

export function serializeDeploymentId(value: DeploymentId): string {
  return JSON.stringify(validateForWrite(DeploymentIdSchema, value, WHAT))
}

/** A new random deployment id. */
export function newDeploymentId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return `dep_${toHex(bytes)}`
}
