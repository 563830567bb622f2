/** A promise the test opens when it chooses (a scripted reply's `hold`, a held write). */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open }
}
