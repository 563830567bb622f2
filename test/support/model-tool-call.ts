/** A tool call the mock model answers with: its id, the tool's name and its JSON arguments. */
export const toolCall = (id: string, name: string, args: object) => ({
  id,
  name,
  arguments: JSON.stringify(args),
})
