/** Help texts of `turnline` and its commands. */

const CONNECTION = `Where the commands run:
  (default)            the engine embedded in this process, configured from the environment
                       like \`npm start\` (sessions in TURNLINE_DATA_DIR, default
                       ~/.local/state/turnline;
                       OPENAI_API_KEY / OPENAI_BASE_URL / TURNLINE_MODEL; without them the
                       built-in offline demo model answers)
  --url URL            a running Turnline server instead (env TURNLINE_URL)
  --api-key KEY        its bearer key, with TURNLINE_API_KEYS set there (env TURNLINE_API_KEY)
`

export const MAIN_USAGE = `turnline — the Turnline agent loop from the command line

Usage:
  turnline exec [options] [PROMPT|-]            run a prompt as one session, to its end
  turnline exec resume [options] SESSION [PROMPT|-]
  turnline exec resume --last [PROMPT|-]        continue a session (a completed one in a fork)
  turnline sessions [options]                   list sessions
  turnline events SESSION [options]             print a session's events (--follow: live)
  turnline delete SESSION [options]             erase a session and everything of it
  turnline artifact SESSION [OUTPUT] [options]  list the tool outputs a session kept whole,
                                                or print one (out_… or its call id)
  turnline --version | --help | <command> --help

${CONNECTION}
Exit codes of exec: 0 success, 1 error_during_execution, 2 usage, 3 error_max_turns,
4 error_max_budget_usd, 5 cancelled, 6 answer does not match --output-schema,
7 server unreachable or request refused, 8 waiting for an approval, 130 interrupted.
`

export const EXEC_USAGE = `Usage:
  turnline exec [options] [PROMPT|-]
  turnline exec resume [options] SESSION [PROMPT|-]
  turnline exec resume --last [--workspace NAME] [PROMPT|-]

Runs PROMPT (the argument; stdin for \`-\` or when omitted and stdin is piped) as one session:
creates it, steps the turn (through tool calls and sandbox waits), completes it, and exits with
its outcome. Progress goes to stderr; the final answer to stdout when stdout is a pipe or file.

Options:
  --json                    bare ThreadEvent JSON lines on stdout (VT Code schema 0.11.0),
                            thread.started … thread.completed; no progress on stderr
  --events FILE             the same JSON lines to FILE
  -o, --last-message-file FILE
                            the final answer to FILE (empty, with a warning, when none)
  --output-schema FILE      a JSON Schema the final answer must follow (sent to the model as
                            strict structured output; checked here: exit 6 on a mismatch)
  --max-turns N             stop after N model requests (exit 3)
  --max-budget-usd X        stop once the estimated cost exceeds X dollars (exit 4)
  --busy-timeout SECONDS    how long to wait on a session another request keeps busy
                            (default 600; past it: exit 7, naming the session)
  -m, --model NAME          the model (default: TURNLINE_MODEL on the server or here)
  --workspace NAME          the session's workspace (default: default)
  -C, --cd DIR              the folder the agent works in and may change (default: the current
                            one; embedded engine only — a server's runner keeps its own folders)
  --keep-open               do not complete the session after the turn: resume continues the
                            same session and sandbox (no thread.completed; the exit code
                            follows the turn)
  --last                    (resume) the most recently updated session

resume: a session that is still open gets the next turn (without PROMPT: a waiting turn is
continued); a completed one is forked (summarized history, new sandbox) and the prompt runs
there. --max-turns and --max-budget-usd count from the resume on (an open session's limits are
raised by them; a fork gets them); --model and --output-schema belong to new sessions only.

${CONNECTION}`

export const SESSIONS_USAGE = `Usage: turnline sessions [--workspace NAME] [--status active|completed] [--limit N]
                         [--oldest] [--cursor CURSOR] [--json]

Lists a workspace's sessions, the most recently active first (--oldest: the least recently
active first): id, status (with a turn running or interrupted, or what it waits for), turns,
events, last activity, title; --limit per page (default 50, at most 200). When more remain,
stderr names the --cursor of the next page. --json prints the server's answer
({"sessions":[…],"cursor"?}) unchanged.

${CONNECTION}`

export const DELETE_USAGE = `Usage: turnline delete SESSION

Erases the session and everything of it: its events, state, manifest, exports and pending
follow-ups. Afterwards every read of it fails as for an unknown id. A session whose turn is
running is refused (cancel it first, or wait); a deletion cut short is finished by running the
command again.

${CONNECTION}`

export const ARTIFACT_USAGE = `Usage: turnline artifact SESSION [OUTPUT] [--range START-END] [--output FILE]

Without OUTPUT: lists the tool outputs the session kept whole because they passed the inline
limit (an HTTP or MCP tool's answer, a command's output, a hook's answer), one a line: artifact
id, bytes, lines, then the tool, the model's call id and the tool_output item id — or, for a
hook's answer, "hook EVENT HOOK" and the model's call id the hook ran for (pre/post_tool_use).
With OUTPUT: prints that output whole. OUTPUT is its artifact id (out_…, as its preview names it;
a command answer has it as output_artifact_id) or the call that made it (the model's call id, or
the tool_invocation or tool_output item id). --output FILE writes its bytes exactly; stdout gets
it as text. --range reads one byte range (END inclusive; START- to the end).

${CONNECTION}`

export const EVENTS_USAGE = `Usage: turnline events SESSION [--after SEQ] [--follow] [--json]

Prints a session's events from the start (or after SEQ). --follow keeps printing new events as
they are committed until thread.completed (Ctrl-C stops). --json prints bare ThreadEvent lines,
one per event (seqs are dense from 0, so line n after --after A is seq A+n).

${CONNECTION}`
