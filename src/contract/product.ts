/** Turnline's name and version, as it introduces itself (ATIF agent, MCP client info). */
export const PRODUCT_NAME = 'turnline'
export const PRODUCT_VERSION = '0.1.0'
