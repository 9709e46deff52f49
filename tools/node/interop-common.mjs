// What the interop drivers share (skills-client-interop.mjs, skills-tools-interop.mjs, prompts-interop.mjs): the
// pinned protocol eras, the SDK's own version, a transport from the test's config, and errors as one line.
import { readFileSync } from 'node:fs';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

export const MODERN = '2026-07-28';

export const clientPackage = JSON.parse(
  readFileSync(new URL('./node_modules/@modelcontextprotocol/client/package.json', import.meta.url), 'utf8'),
);

// era "legacy" is the 2025-11-25 `initialize` handshake, "modern" the 2026-07-28 era (pinned: no fallback).
export function versionNegotiation(era) {
  return { mode: era === 'modern' ? { pin: MODERN } : 'legacy' };
}

// {"transport": "http", "url": ..., "token"?: bearer token} or {"transport": "stdio", "command": ..., "args": [...]}.
export function transportFor(config) {
  if (config.transport === 'http') {
    const headers = config.token ? { Authorization: `Bearer ${config.token}` } : {};
    return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers } });
  }
  return new StdioClientTransport({ command: config.command, args: config.args, env: process.env, stderr: 'pipe' });
}
