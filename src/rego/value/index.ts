/**
 * The Rego value model.
 *
 * Contract:
 * - `Value` is null | boolean | number | BigNum | string | readonly Value[] | RegoObject | RegoSet.
 *   JS `undefined` means Rego *undefined* and is never a Value.
 * - Values are immutable once shared; `RegoObject.set`/`RegoSet.add` are for building fresh values.
 * - Numbers: a JS number denotes the decimal of its shortest text; `BigNum` holds exactly the values
 *   no JS number can (big integers, long decimals). Producers normalise (`parseNumber`, `fromDecimal`,
 *   arithmetic in number.ts), so equal numbers always share one representation.
 * - `keyOf` is the canonical hash (a string is its own key); `equals` is structural; `compare` is
 *   OPA's total order null < boolean < number < string < array < object < set. Objects and sets
 *   iterate in that order.
 * - `fromJSON`/`parseJSON` bring JSON in (bigint and exact text keep precision); `toJSON`/
 *   `stringifyJSON` take values out as OPA renders them (sets as sorted arrays).
 */
export {
  type Value,
  type ArrayValue,
  type TypeName,
  type StringifyOptions,
  RegoObject,
  RegoSet,
  typeName,
  keyOf,
  equals,
  compare,
  compareStrings,
  fromJSON,
  toJSON,
  stringifyJSON,
  parseJSON,
} from './value.js';
export * as num from './number.js';
export { toRegoText, goQuote } from './text.js';
export { BigNum, type RegoNumber, isNumber, parseNumber, numberText } from './number.js';
