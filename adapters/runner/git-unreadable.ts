/** What the runner's direct reading of a `.git` does not follow: the caller asks git instead. */
export class GitUnreadable extends Error {
  override readonly name = 'GitUnreadable'
}
