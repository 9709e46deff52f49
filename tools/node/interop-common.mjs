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

// An error as one line: its name, the SDK's reason if it gives one, its message.
export function describe(error) {
  const reason = error?.reason ? ` [${error.reason}]` : '';
  return `${error?.name ?? 'Error'}${reason}: ${error?.message ?? String(error)}`;
}

// Connect `client` as `config` says; on failure print `summary` with the reason, set exit status 2 (could not
// connect at all) and answer false. On success the summary notes the negotiated version.
export async function connected(client, config, summary) {
  try {
    await client.connect(transportFor(config));
  } catch (error) {
    process.stdout.write(JSON.stringify({ ...summary, failures: [{ step: 'connect', error: describe(error) }] }));
    process.exitCode = 2;
    return false;
  }
  summary.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
  return true;
}
