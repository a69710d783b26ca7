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
  {
    file: 'regorus/builtins/arrays/slice.yaml',
    note: 'all',
    reason: 'expects results for float indexes (array.slice([5], 1.1, 2)) with strict builtin errors; OPA reads both indexes with IntOperand, an eval_type_error "operand 2 must be integer number but got floating-point number"',
  },
  {
    file: 'regorus/builtins/numbers/div.yaml',
    note: 'div',
    reason: "expects the f64 quotient 5.1000000000000005 for 15.3 / 3; OPA divides in big.Float (64-bit mantissa) and answers 5.1",
  },
  {
    file: 'regorus/builtins/units/parse.yaml',
    note: 'b suffix not supported',
    reason: 'expects units.parse("1mb") to be undefined with strict builtin errors; OPA fails it with "unit mb not recognized"',
  },
  {
    file: 'regorus/builtins/semver/is_valid.yaml',
    note: 'semver.compare wrong arg1 type (regorus error: expects string argument)',
    reason: 'OPA declares semver.is_valid(vsn: any) and answers false for a value that is not a string; regorus raises an error',
  },
  {
    file: 'regorus/builtins/strings/indexof.yaml',
    note: 'base',
    reason: 'the case expects indexof("", "") = -1; OPA fails that call with "empty search character" (and the case runs with strict builtin errors)',
  },
  {
    file: 'regorus/builtins/strings/lower.yaml',
    note: 'unicode string',
    reason: "expects Rust's final-sigma rule (ὀδυσσεύς); OPA lowers with Go's strings.ToLower, which maps every Σ to σ (ὀδυσσεύσ)",
  },
  {
    file: 'regorus/builtins/strings/sprintf.yaml',
    note: 'numeric formatting',
    reason: "expects Rust's formatting (%f of 3.14 as 3.14, %o of 64 as 0O100); OPA's sprintf is Go's fmt: 3.140000 and 100",
  },
  {
    file: 'regorus/builtins/strings/sprintf.yaml',
    note: 'error cases (regorus error: no argument specified for format verb 1)',
    reason: 'a verb without an argument is an error in regorus; OPA (Go fmt) prints %!d(MISSING) — a known suspect in the conformance README',
  },
  {
    file: 'regocpp/builtins.yaml',
    note: 'regocpp/regex-zero-match-utf8',
    reason: 'expects 4 empty matches in "café"; Go\'s regexp, which OPA uses, reports one at every rune boundary and the end: 5',
  },
  ...['regocpp/glob-match-unclosed-bracket-error', 'regocpp/glob-match-invalid-range-error'].map((note) => ({
    file: 'regocpp/builtins.yaml',
    note,
    reason: 'expects rego-cpp\'s wording "syntax error in pattern"; the pattern is refused either way, in the words of the glob library — error texts worded by that engine are a known suspect in the conformance README',
  })),
  ...['regocpp/sprintf-unknown-verb-star', 'regocpp/sprintf-unknown-verb-n'].map((note) => ({
    file: 'regocpp/builtins.yaml',
    note,
    reason: "expects the verb printed back (%*d, %n); OPA's sprintf is Go's fmt, which prints %!d(MISSING) and %!n(int=42)",
  })),
  ...['regocpp/time-parse-duration-exponent-superset', 'regocpp/units-parse-deci-superset'].map((note) => ({
    file: 'regocpp/builtins.yaml',
    note,
    reason: 'a rego-cpp superset (exponents in durations, the deci unit); OPA refuses these inputs',
  })),
  ...['regocpp/uri-parse-ipv6-zone', 'regocpp/uri-parse-opaque', 'regocpp/uri-is-valid-control-byte', 'regocpp/uri-is-valid-ok'].map((note) => ({
    file: 'regocpp/builtins.yaml',
    note,
    reason: 'uri.parse and uri.is_valid are rego-cpp builtins, not OPA\'s (OPA v1.12 has no uri.* builtins), so OPA rejects the module with "undefined function"',
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
