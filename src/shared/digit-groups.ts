/**
 * An integer with its thousands separated by commas (`1,234,567`), as `toLocaleString('en-US')`
 * writes it — but computed here: `toLocaleString` takes its grouping from the engine's ICU data,
 * and an engine built without it (a Node built `--with-intl=none`, say) writes `1234567`. The text
 * is sent to the model and stored in events, which must be the same on every engine.
 */
export function groupDigits(value: number): string {
  if (!Number.isSafeInteger(value)) throw new RangeError(`not a safe integer: ${value}`)
  const grouped = String(Math.abs(value)).replace(/\B(?=(\d{3})+$)/g, ',')
  return value < 0 ? `-${grouped}` : grouped
}
