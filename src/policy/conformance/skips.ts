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
  ...['regocpp/jwt-sub-match', 'regocpp/jwt-sub-mismatch'].map((note) => ({
    file: 'regocpp/builtins.yaml',
    note,
    reason: 'uses a `sub` constraint in io.jwt.decode_verify, a rego-cpp extension; OPA knows only cert, secret, alg, iss, aud and time and fails with "unknown token validation constraint: sub"',
  })),
  {
    file: 'regorus/import/tests.yaml',
    note: 'overload error does not leak callee module imports',
    reason: 'regorus ignores that m(1) has two outputs (1 and 2); OPA evaluates every definition of lib.f, so m(1) is eval_conflict_error "functions must not produce multiple outputs for same inputs"',
  },
  {
    file: 'regorus/compr/tricky.yaml',
    note: 'treat { 1 | 1 } as comprehension',
    reason: 'regorus reads the body of `x if { 1 | 1 }` as a set comprehension; OPA parses braces after `if` as a rule body, whose expression `1 | 1` is a set union of numbers (eval_type_error under strict builtin errors)',
  },
  ...['unary expr on non literals produces an error (regorus error: unary - can only be used with numeric literals)'].map((note) => ({
    file: 'regorus/unary/tests.yaml',
    note,
    reason: 'OPA accepts unary minus before a reference since open-policy-agent/opa pull request 8551 (`-x` is `minus(0, x)`); the regorus case records the older behaviour',
  })),
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
