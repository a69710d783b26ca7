import { typeName, type TypeName } from '../value/index.js';
import { defineBuiltins, type Builtin } from './registry.js';
import { T } from './types.js';

const predicate = (name: string, kind: TypeName): Builtin => ({
  name,
  decl: T.fn([T.any], T.boolean),
  impl: ([v]) => typeName(v!) === kind,
});

/** Type predicates and `type_name`. */
export const typeBuiltins = defineBuiltins(
  predicate('is_number', 'number'),
  predicate('is_string', 'string'),
  predicate('is_boolean', 'boolean'),
  predicate('is_array', 'array'),
  predicate('is_set', 'set'),
  predicate('is_object', 'object'),
  predicate('is_null', 'null'),
  { name: 'type_name', decl: T.fn([T.any], T.string), impl: ([v]) => typeName(v!) },
);
