import type { Browser } from 'playwright-core'

/** A rectangle of a screenshot, in CSS pixels (the tests use a device scale factor of 1). */
export interface Region {
  x: number
  y: number
  width: number
  height: number
  /** Counts the pixels within 48 (Euclidean, RGB) of this color. */
  color?: [number, number, number]
}

export interface RegionStats {
  /** Mean color. */
  mean: [number, number, number]
  /** Share of dark pixels (luminance < 110): text or dark fills. */
  dark: number
  /** Share of pixels close to the region's `color`. */
  match: number
}

export interface ScreenshotStats {
  width: number
  height: number
  /** Distinct colors over the whole image (quantized to 5 bits per channel). */
  colors: number
  regions: Record<string, RegionStats>
}

/**
 * Decodes a PNG screenshot in a blank page of the same browser (canvas), and measures regions
 * of it. The code runs as text in the page, so nothing of the test's transpiled code leaks in.
 */
const MEASURE = `async ({ png, regions }) => {
  const image = new Image()
  image.src = 'data:image/png;base64,' + png
  await image.decode()
  const canvas = document.createElement('canvas')
  canvas.width = image.naturalWidth
  canvas.height = image.naturalHeight
  const context = canvas.getContext('2d')
  context.drawImage(image, 0, 0)
  const all = context.getImageData(0, 0, canvas.width, canvas.height).data
  const colors = new Set()
  for (let i = 0; i < all.length; i += 4) {
    colors.add(((all[i] >> 3) << 10) | ((all[i + 1] >> 3) << 5) | (all[i + 2] >> 3))
  }
  const out = {}
  for (const [name, r] of Object.entries(regions)) {
    const x = Math.max(0, Math.floor(r.x))
    const y = Math.max(0, Math.floor(r.y))
    const w = Math.max(1, Math.min(canvas.width - x, Math.floor(r.width)))
    const h = Math.max(1, Math.min(canvas.height - y, Math.floor(r.height)))
    const data = context.getImageData(x, y, w, h).data
    let sr = 0, sg = 0, sb = 0, dark = 0, match = 0
    const n = data.length / 4
    for (let i = 0; i < data.length; i += 4) {
      const [pr, pg, pb] = [data[i], data[i + 1], data[i + 2]]
      sr += pr; sg += pg; sb += pb
      if (0.299 * pr + 0.587 * pg + 0.114 * pb < 110) dark++
      if (r.color && Math.hypot(pr - r.color[0], pg - r.color[1], pb - r.color[2]) < 48) match++
    }
    out[name] = { mean: [sr / n, sg / n, sb / n], dark: dark / n, match: match / n }
  }
  return { width: canvas.width, height: canvas.height, colors: colors.size, regions: out }
}`

export async function screenshotStats(
  browser: Browser,
  png: Buffer,
  regions: Record<string, Region>,
): Promise<ScreenshotStats> {
  const page = await browser.newPage()
  try {
    return (await page.evaluate(
      `(${MEASURE})(${JSON.stringify({ png: png.toString('base64'), regions })})`,
    )) as ScreenshotStats
  } finally {
    await page.close()
  }
}
