import ranks from 'gpt-tokenizer/esm/bpeRanks/o200k_base'
import { rankTableEncoding } from './worker-rank-table.ts'

/** `gpt-tokenizer/encoding/o200k_base` in the Worker bundle (wrangler.toml): worker-rank-table.ts. */
export const { countTokens, setMergeCacheSize } = rankTableEncoding('o200k_base', ranks)
