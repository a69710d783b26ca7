/**
 * The builtin function table: every builtin's name, declaration (checked by the compiler, printed
 * as OPA's capabilities JSON) and implementation, one file per category.
 *
 * The evaluator calls builtins through `invoke` / `invokeRelation` (operand kinds checked, errors
 * typed: BuiltinError → `eval_builtin_error`, OperandTypeError → `eval_type_error`; either makes the
 * call undefined unless strict builtin errors are on or the error is `fatal` (a builtin this build
 * cannot run, a template-string conflict)) with a `BuiltinContext` from `createBuiltinContext`.
 */
import { capabilitiesOf, createRegistry, type Registry } from './registry.js';
import { aggregates } from './aggregates.js';
import { arrays, operators, sets } from './collections.js';
import { encoding } from './encoding.js';
import { globs } from './glob.js';
import { graphs } from './graph.js';
import { jsonPaths } from './jsonpaths.js';
import { arithmetic, bits, comparisons, numbers } from './numbers.js';
import { objects } from './objects.js';
import { regex } from './regex.js';
import { strings } from './strings.js';
import { typeBuiltins } from './typenames.js';
import { time } from './time.js';
import { units } from './units.js';
import { semver } from './semver.js';
import { uuids } from './uuid.js';
import { net } from './net.js';
import { conversions, runtime } from './runtime.js';
import { cryptoBuiltins } from './crypto.js';
import { jwt } from './jwt.js';
import { templates } from './template.js';
import { x509 } from './x509.js';

export const builtins: Registry = createRegistry([
  operators,
  comparisons,
  arithmetic,
  bits,
  numbers,
  aggregates,
  typeBuiltins,
  strings,
  regex,
  globs,
  objects,
  arrays,
  sets,
  jsonPaths,
  encoding,
  graphs,
  time,
  units,
  semver,
  uuids,
  net,
  conversions,
  runtime,
  cryptoBuiltins,
  jwt,
  templates,
  x509,
]);

/** OPA's capabilities JSON for this build's builtins. */
export function capabilities(): { builtins: unknown[] } {
  return capabilitiesOf(builtins.all);
}

export {
  type Builtin,
  type BuiltinContext,
  type BuiltinContextOptions,
  type BuiltinHooks,
  type BuiltinFunction,
  type BuiltinRelation,
  type Registry,
  BuiltinError,
  OperandTypeError,
  UnsupportedBuiltinError,
  createBuiltinContext,
  invoke,
  invokeRelation,
} from './registry.js';
export { T, type RegoType, type FunctionDecl, typeToString, conforms, kindsOf } from './types.js';
