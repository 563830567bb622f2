/**
 * Formats a finite number the way serde_json writes an `f64` (Rust `ryu`): shortest round-trip
 * digits, always with a fraction or an exponent (`2.0`, `1.25`, `0.0001`, `1e-7`, `1e16`,
 * `1.5e-6`). VT Code writes `thread.completed.total_cost_usd` this way.
 *
 * Kept as our own code on purpose: the wire contract is byte-exact, and no JavaScript library
 * formats numbers as serde_json/ryu does (JSON.stringify writes `2` and `1e-7`, number-formatting
 * libraries aim at humans); the golden tests pin the bytes.
 */
export function formatF64(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`)
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0'
  const sign = value < 0 ? '-' : ''
  const { digits, pointAt } = decimalDigits(Math.abs(value))
  // value = 0.<digits> × 10^pointAt, i.e. the decimal point sits after `pointAt` digits.
  const length = digits.length
  const exponent = pointAt - length
  let body: string
  if (exponent >= 0 && pointAt <= 16) {
    body = `${digits}${'0'.repeat(exponent)}.0`
  } else if (pointAt > 0 && pointAt <= 16) {
    body = `${digits.slice(0, pointAt)}.${digits.slice(pointAt)}`
  } else if (pointAt > -5 && pointAt <= 0) {
    body = `0.${'0'.repeat(-pointAt)}${digits}`
  } else if (length === 1) {
    body = `${digits}e${pointAt - 1}`
  } else {
    body = `${digits[0]}.${digits.slice(1)}e${pointAt - 1}`
  }
  return sign + body
}

/** Shortest round-trip significant digits of a positive finite number and its point position. */
function decimalDigits(value: number): { digits: string; pointAt: number } {
  const text = String(value)
  const expAt = text.indexOf('e')
  const mantissa = expAt === -1 ? text : text.slice(0, expAt)
  const exp = expAt === -1 ? 0 : Number(text.slice(expAt + 1))
  const dotAt = mantissa.indexOf('.')
  const intPart = dotAt === -1 ? mantissa : mantissa.slice(0, dotAt)
  const fracPart = dotAt === -1 ? '' : mantissa.slice(dotAt + 1)
  const all = intPart + fracPart
  const leading = all.length - all.replace(/^0+/, '').length
  const digits = all.slice(leading).replace(/0+$/, '')
  return { digits, pointAt: intPart.length - leading + exp }
}
