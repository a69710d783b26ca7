import type { Rule, RuleKind } from './ir.js';

/** All rules defining the document at one path, with the same kind. */
export interface RuleSet {
  path: string[];
  /** `data.a.b` */
  name: string;
  kind: RuleKind;
  rules: Rule[];
  default?: Rule;
  arity: number;
  /** Rule index on equality with input/data refs (see compiler/indexing.ts). */
  index?: RuleIndex;
}

/**
 * Candidate rules by the value of one ref: rules whose body demands `ref == constant` are found
 * by the ref's value; the others are always candidates.
 */
export interface RuleIndex {
  root: 'input' | 'data';
  path: string[];
  byValue: Map<string, Rule[]>;
  always: Rule[];
}

/** A node of the `data` tree: packages and rule paths, merged with the base documents at eval. */
export interface DataNode {
  path: string[];
  children: Map<string, DataNode>;
  ruleSet?: RuleSet;
}

export interface Program {
  root: DataNode;
  /** Every rule set by `data.a.b` name. */
  ruleSets: Map<string, RuleSet>;
}

export function newNode(path: string[]): DataNode {
  return { path, children: new Map() };
}
