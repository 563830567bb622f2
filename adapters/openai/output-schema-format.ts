/**
 * Name of the structured-output format carrying a session's `output_schema` (both APIs require
 * one; it only labels the schema for the provider).
 */
export const OUTPUT_SCHEMA_NAME = 'turnline_output'
