import ranks from 'gpt-tokenizer/esm/bpeRanks/cl100k_base'
import { rankTableEncoding } from './worker-rank-table.ts'

/** `gpt-tokenizer/encoding/cl100k_base` in the Worker bundle (wrangler.toml): worker-rank-table.ts. */
export const { countTokens, setMergeCacheSize } = rankTableEncoding('cl100k_base', ranks)
