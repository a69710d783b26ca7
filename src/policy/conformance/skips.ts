/**
 * Cases that are not run, each with the reason printed by the runner. Two kinds: cases that need
 * what the suite cannot provide deterministically (network, wall clock), and cases where the
 * regorus or rego-cpp suites record behaviour that contradicts OPA (OPA is the reference).
 */
import type { ConformanceCase } from './runner.js';

/** Skips by file and note. */
const BY_CASE: ReadonlyArray<{ file: string; note: string; reason: string }> = [
  {
    file: 'regocpp/bugs.yaml',
    note: 'regocpp/bug154',
    reason: "error text worded by rego-cpp ('Recursion detected in rule body'); OPA reports the same case as rego_recursion_error 'rule data.test.disallow is recursive: …', which we do",
  },
];

/** Skips by what the case uses. */
const BY_CONTENT: ReadonlyArray<{ pattern: RegExp; reason: string }> = [
  { pattern: /\bnet\.lookup_ip_addr\b/, reason: 'needs DNS (net.lookup_ip_addr); the suite runs without network' },
];

export function skipReason(file: string, c: ConformanceCase): string | undefined {
  for (const s of BY_CASE) if (file.endsWith(s.file) && s.note === c.note) return s.reason;
  const text = [c.query, ...(c.modules ?? [])].join('\n');
  for (const s of BY_CONTENT) if (s.pattern.test(text)) return s.reason;
  return undefined;
}
