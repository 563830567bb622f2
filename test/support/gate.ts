/** A promise the test opens when it chooses (a scripted reply's `hold`, a held write). */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

/** Whether `promise` settles within the macrotask queue's next turns (a head start for a bug). */
export async function settledSoon(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  const mark = () => {
    done = true
  }
  void promise.then(mark, mark)
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve))
  return done
}
