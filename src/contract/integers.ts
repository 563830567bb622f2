import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * Integer schemas matching the Rust integer types of the VT Code wire structs. JSON numbers beyond
 * 2^53 cannot be represented exactly in JavaScript, so `u64` fields are limited to safe integers.
 */
export const U8Schema = lazySchema(() => z.number().int().min(0).max(255))
export const U32Schema = lazySchema(() => z.number().int().min(0).max(4_294_967_295))
export const U64Schema = lazySchema(() => z.number().int().min(0).max(Number.MAX_SAFE_INTEGER))
export const I32Schema = lazySchema(() => z.number().int().min(-2_147_483_648).max(2_147_483_647))
