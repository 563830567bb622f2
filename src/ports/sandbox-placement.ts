/**
 * Where a session's sandbox work happens: another session's workspace (`sessionId`) under a
 * folder of it (`baseDir`), e.g. a sub-agent in a git worktree `.vtcode/worktrees/<name>`.
 */
export interface SandboxPlacement {
  sessionId: string
  baseDir: string
}
