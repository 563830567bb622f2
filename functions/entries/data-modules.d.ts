/**
 * A `.bin` file imported by the Worker bundle: a Data module (wrangler's default rule), its bytes
 * as an ArrayBuffer (worker-rank-tables.ts).
 */
declare module '*.bin' {
  const data: ArrayBuffer
  export default data
}
